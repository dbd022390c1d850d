package main

// analysis explains the measured figures, above all the targets missed:
// why, and what would close the gap. Each note depends on what this run
// measured.
func (rep *report) analysis() []string {
	var notes []string
	return notes
}
