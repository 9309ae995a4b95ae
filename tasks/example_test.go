package tasks_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
)

// sum is a tiny final-output producer: it adds numbers in a goroutine and
// reports the total as its final output, unless it is cancelled first.
func sum(nums ...int) func() (tasks.Hooks, error) {
	return func() (tasks.Hooks, error) {
		done := make(chan tasks.Outcome, 1)
		stop := make(chan struct{})
		var once sync.Once
		go func() {
			total := 0
			for _, n := range nums {
				select {
				case <-stop:
					done <- tasks.Outcome{Status: tasks.Killed, Detail: "cancelled"}
					return
				default:
					total += n
				}
			}
			done <- tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0", Output: strconv.Itoa(total) + "\n"}
		}()
		cancel := func(reason string) error {
			once.Do(func() { close(stop) })
			return nil
		}
		return tasks.Hooks{Cancel: cancel, Done: done}, nil
	}
}

func Example() {
	svc := tasks.New(tasks.Config{})
	defer svc.Close()           // cancels and awaits whatever still runs
	detach := svc.AttachTools() // tasks start only while tools can reach them
	defer detach()

	owner := session.New("mcp-1", "")
	defer owner.End() // kills and drops the session's tasks

	snap, err := svc.Start(tasks.Spec{Kind: "sum", Label: "1+2+3", Owner: owner, Run: sum(1, 2, 3)})
	if err != nil {
		panic(err)
	}
	fmt.Println(snap.ID, snap.Status)

	snap, _ = svc.Wait(context.Background(), owner, snap.ID, 30*time.Second)
	text, snap, _ := svc.Read(owner, snap.ID)
	fmt.Print(text)
	fmt.Println(snap.Status, snap.Detail, snap.Reported)

	_, _, err = svc.Read(session.New("mcp-2", ""), snap.ID)
	fmt.Println(err)
	// Output:
	// sum-1 running
	// 6
	// completed exit code: 0 true
	// task sum-1 belongs to another session
}
