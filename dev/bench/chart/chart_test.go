package chart

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"testing"
)

var (
	blue   = color.RGBA{31, 119, 180, 255}
	orange = color.RGBA{255, 127, 14, 255}
)

// longestRun is the longest horizontal run of pixels of colour c.
func longestRuns(img image.Image, c color.RGBA) []int {
	var runs []int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		run, best := 0, 0
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
		if best > 0 && (len(runs) == 0 || runs[len(runs)-1] != best) {
			runs = append(runs, best)
		}
	}
	return runs
}

// TestBarsPNG: the chart is 1200 pixels wide and its bars are as long as
// their values say (one bar twice another is twice as long, from one zero).
func TestBarsPNG(t *testing.T) {
	b := Bars{
		Title: "Latency p50 by scenario",
		Unit:  "ms",
		Series: []Series{
			{"first request", blue},
			{"duplicate", orange},
		},
		Panels: []Panel{{Title: "5 ms per call", Groups: []Group{
			{"bare", []float64{10, math.NaN()}},
			{"powertools", []float64{20, 6.3}},
		}}},
		Notes: []string{"lower is better"},
	}
	var buf bytes.Buffer
	if err := b.PNG(&buf); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("CHART_OUT"); out != "" {
		_ = os.WriteFile(out+"-bars.png", buf.Bytes(), 0o644)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 1200 {
		t.Errorf("width %d, want 1200", w)
	}
	runs := longestRuns(img, blue)
	long, short := 0, math.MaxInt
	for _, r := range runs {
		if r > 20 { // bars, not the legend's swatch
			long, short = max(long, r), min(short, r)
		}
	}
	if ratio := float64(long) / float64(short); math.Abs(ratio-2) > 0.05 {
		t.Errorf("the 20 ms bar is %d px, the 10 ms one %d px (ratio %.2f); want twice as long", long, short, ratio)
	}
	b.Panels[0].Groups[0].Values = []float64{1}
	if err := b.PNG(&buf); err == nil {
		t.Error("a group with too few values was accepted")
	}
}

func TestWrap(t *testing.T) {
	f, err := newFonts()
	if err != nil {
		t.Fatal(err)
	}
	st := f.style(f.regular, 10, ink)
	lines := wrap(st, "one two three four five six seven", width(st, "one two three"))
	if len(lines) < 3 || lines[0] != "one two three" {
		t.Fatalf("wrap = %q", lines)
	}
	for _, l := range lines {
		if width(st, l) > width(st, "one two three") {
			t.Errorf("line %q is wider than the limit", l)
		}
	}
}

func TestLinesPNG(t *testing.T) {
	l := Lines{
		Title: "Soak", XUnit: "min",
		Curves: []Curve{
			{Title: "heap", Unit: "MiB", Color: blue, X: []float64{0, 5, 10}, Y: []float64{12, 13, 12.5}},
			{Title: "goroutines", Color: orange, X: []float64{0, 10}, Y: []float64{80, 81}},
		},
		Notes: []string{"flat is good"},
	}
	var buf bytes.Buffer
	if err := l.PNG(&buf); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("CHART_OUT"); out != "" {
		_ = os.WriteFile(out+"-lines.png", buf.Bytes(), 0o644)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 1200 {
		t.Errorf("width %d, want 1200", w)
	}
	if len(longestRuns(img, orange)) == 0 {
		t.Error("the goroutines curve is not drawn")
	}
	l.Curves[1].Y = l.Curves[1].Y[:1]
	if err := l.PNG(&buf); err == nil {
		t.Error("a curve with fewer Y than X was accepted")
	}
}

// TestMixedCase: lower and upper case are drawn as themselves (the former
// hand-drawn font had capitals only and drew both the same).
func TestMixedCase(t *testing.T) {
	draw := func(title string) []byte {
		var buf bytes.Buffer
		b := Bars{Title: title, Series: []Series{{"s", blue}}, Panels: []Panel{{Groups: []Group{{"g", []float64{1}}}}}}
		if err := b.PNG(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if bytes.Equal(draw("latency"), draw("LATENCY")) {
		t.Error(`"latency" and "LATENCY" draw the same image`)
	}
}
