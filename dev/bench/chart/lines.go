package chart

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
)

// Curve is one panel of a line chart: Y[i] at X[i], in X order.
type Curve struct {
	Title string
	// Unit follows the axis labels ("MiB").
	Unit  string
	Color color.RGBA
	X, Y  []float64
}

// Lines is a stack of line-chart panels sharing one X axis.
type Lines struct {
	Title string
	// XUnit follows the X axis labels ("min").
	XUnit  string
	Curves []Curve
	// Notes are lines printed under the chart.
	Notes []string
	// Width of the image in pixels; default 1200.
	Width int
}

const plotH = 220

// PNG encodes the chart as a PNG image. Each panel's Y axis runs from 0 to
// a little above its largest value, so a flat curve looks flat.
func (l Lines) PNG(w io.Writer) error {
	if len(l.Curves) == 0 {
		return errors.New("chart: no curves")
	}
	width := l.Width
	if width == 0 {
		width = 1200
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, c := range l.Curves {
		if len(c.X) < 2 || len(c.X) != len(c.Y) {
			return fmt.Errorf("chart: curve %q needs at least two points and as many Y as X", c.Title)
		}
		xmin, xmax = math.Min(xmin, c.X[0]), math.Max(xmax, c.X[len(c.X)-1])
	}
	if !(xmax > xmin) {
		return errors.New("chart: the X range is empty")
	}
	lineH := textHeight(scale) + 8
	white := color.RGBA{255, 255, 255, 255}
	ink := color.RGBA{33, 37, 41, 255}
	grey := color.RGBA{134, 142, 150, 255}
	rule := color.RGBA{222, 226, 230, 255}
	axisW := textWidth("99999.9 MiB", scale) + 8
	plotX0, plotX1 := margin+axisW, width-margin
	perLine := (width - 2*margin + glyphGap*scale) / ((glyphW + glyphGap) * scale)
	var notes []string
	for _, n := range l.Notes {
		notes = append(notes, wrap(n, perLine)...)
	}
	height := margin + lineH + 6 + len(l.Curves)*(lineH+plotH+lineH+panelGap) + len(notes)*lineH + margin
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), &image.Uniform{white}, image.Point{}, draw.Src)
	y := margin
	drawText(img, margin, y, l.Title, scale, ink)
	y += lineH + 6
	for _, c := range l.Curves {
		drawText(img, margin, y, c.Title, scale, ink)
		y += lineH
		top := 0.0
		for _, v := range c.Y {
			top = math.Max(top, v)
		}
		if top == 0 {
			top = 1
		}
		top *= 1.15
		y1 := y + plotH           // the plot's bottom
		for i := 0; i <= 4; i++ { // grid and Y labels
			gy := y1 - i*plotH/4
			fill(img, image.Rect(plotX0, gy, plotX1, gy+1), rule)
			label := fmt.Sprintf("%.1f %s", top*float64(i)/4, c.Unit)
			drawText(img, plotX0-8-textWidth(label, scale), gy-textHeight(scale)/2, label, scale, grey)
		}
		px := func(x float64) int { return plotX0 + int(math.Round((x-xmin)/(xmax-xmin)*float64(plotX1-plotX0))) }
		py := func(v float64) int { return y1 - int(math.Round(v/top*float64(plotH))) }
		for i := 1; i < len(c.X); i++ {
			segment(img, px(c.X[i-1]), py(c.Y[i-1]), px(c.X[i]), py(c.Y[i]), c.Color)
		}
		y = y1 + 6
		for _, x := range []float64{xmin, (xmin + xmax) / 2, xmax} {
			label := fmt.Sprintf("%.1f %s", x, l.XUnit)
			lx := min(max(px(x)-textWidth(label, scale)/2, plotX0), plotX1-textWidth(label, scale))
			drawText(img, lx, y, label, scale, grey)
		}
		y += lineH + panelGap
	}
	for _, n := range notes {
		drawText(img, margin, y, n, scale, grey)
		y += lineH
	}
	return png.Encode(w, img)
}

// segment draws a line two pixels thick from (x0, y0) to (x1, y1).
func segment(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	steps := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= steps; i++ {
		x := x0 + (x1-x0)*i/steps
		y := y0 + (y1-y0)*i/steps
		fill(img, image.Rect(x, y-1, x+2, y+1), c)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
