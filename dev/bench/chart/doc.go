// Package chart draws the benchmark's latency chart as a PNG with the
// standard library only: horizontal grouped bars, value labels and a
// legend, lettered with a small built-in bitmap font.
package chart
