package tasktool

import "github.com/dsh-go/dsh/prompt"

// The prompt section's name and place.
const (
	SectionName  = "tool:tasks"
	SectionOrder = 106
)

// SectionText is the tool:tasks prompt section.
const SectionText = `Background tasks: keep track of the task ids you start. You are told when a task finishes, so do not poll task_output or sleep while waiting. Collect the output of the tasks you need with task_output (wait: true only when you cannot go on without the result), and task_kill the ones that stopped mattering before your final answer.`

// Section returns the tool:tasks prompt section.
func Section() prompt.Section {
	return prompt.Section{Name: SectionName, Order: SectionOrder, Text: SectionText}
}
