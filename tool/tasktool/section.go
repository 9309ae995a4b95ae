package tasktool

import "github.com/dsh-go/dsh/prompt"

// The prompt section's name and place.
const (
	SectionName  = "tool:tasks"
	SectionOrder = 106
)

// SectionText is the tool:tasks prompt section.
const SectionText = `You are told when a background task finishes: do not poll task_output or sleep while waiting. task_kill the tasks that stopped mattering before your final answer.`

// Section returns the tool:tasks prompt section.
func Section() prompt.Section {
	return prompt.Section{Name: SectionName, Order: SectionOrder, Text: SectionText}
}
