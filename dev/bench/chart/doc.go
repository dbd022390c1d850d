// Package chart draws the benchmark's charts as PNG images with gonum's
// plotting library (gonum.org/v1/plot) in Go's own fonts
// (golang.org/x/image/font/gofont): horizontal grouped bars with value
// labels and a legend (Bars), and stacked line panels on one X axis
// (Lines), each with a title and notes.
package chart
