package session_test

import (
	"fmt"

	"github.com/dsh-go/dsh/session"
)

// Tools and tasks register cleanup on the session that owns them and post
// notices to it; the front end delivers the notices and ends the session.
func Example() {
	s := session.New("mcp-1", "/home/me/project")
	s.OnEnd(func() { fmt.Println("delete spill files") })
	s.OnEnd(func() { fmt.Println("kill tasks") }) // registered last, runs first
	cancel := s.OnEnd(func() { fmt.Println("never runs") })
	cancel()

	s.Notify("background task bash-1 (bash: make) finished [status: completed, exit code: 0]. Read its output with task_output.")
	<-s.Notices() // a front end would select on this
	fmt.Println(s.TakeNotices())

	s.End()
	<-s.Done()
	fmt.Println("ended:", s.Ended(), "notified:", s.Notify("too late"))
	s.OnEnd(func() { fmt.Println("registered after End: runs at once") })
	// Output:
	// [background task bash-1 (bash: make) finished [status: completed, exit code: 0]. Read its output with task_output.]
	// kill tasks
	// delete spill files
	// ended: true notified: false
	// registered after End: runs at once
}
