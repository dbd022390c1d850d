package chart

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"testing"
)

func TestBarsPNG(t *testing.T) {
	b := Bars{
		Title: "Latency p50 by scenario",
		Unit:  "ms",
		Series: []Series{
			{"first request", color.RGBA{31, 119, 180, 255}},
			{"duplicate", color.RGBA{255, 127, 14, 255}},
		},
		Panels: []Panel{{Title: "5 ms per call", Groups: []Group{
			{"bare", []float64{6.1, math.NaN()}},
			{"powertools", []float64{18.4, 6.3}},
		}}},
		Notes: []string{"lower is better"},
	}
	var buf bytes.Buffer
	if err := b.PNG(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 1200 {
		t.Errorf("width %d, want 1200", w)
	}
	b.Panels[0].Groups[0].Values = []float64{1}
	if err := b.PNG(&buf); err == nil {
		t.Error("a group with too few values was accepted")
	}
}

func TestGlyphsAreFiveBySeven(t *testing.T) {
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;'\"-+=/()%#<>_×µ?" {
		g, ok := glyph(r)
		if !ok {
			t.Errorf("no glyph for %q", r)
		}
		for _, row := range g {
			if len(row) != glyphW {
				t.Errorf("glyph %q has a row of %d cells", r, len(row))
			}
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("one two three fourfivesix", 8)
	want := []string{"one two", "three", "fourfive", "six"}
	if len(got) != len(want) {
		t.Fatalf("wrap = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("wrap = %q, want %q", got, want)
		}
	}
}

func TestLinesPNG(t *testing.T) {
	l := Lines{
		Title: "Soak", XUnit: "min",
		Curves: []Curve{
			{Title: "heap", Unit: "MiB", Color: color.RGBA{31, 119, 180, 255}, X: []float64{0, 5, 10}, Y: []float64{12, 13, 12.5}},
			{Title: "goroutines", Color: color.RGBA{255, 127, 14, 255}, X: []float64{0, 10}, Y: []float64{80, 81}},
		},
		Notes: []string{"flat is good"},
	}
	var buf bytes.Buffer
	if err := l.PNG(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Fatal(err)
	}
	l.Curves[1].Y = l.Curves[1].Y[:1]
	if err := l.PNG(&buf); err == nil {
		t.Error("a curve with fewer Y than X was accepted")
	}
}
