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
	"strings"
)

// Series is one kind of bar, drawn in one colour in every group.
type Series struct {
	Name  string
	Color color.RGBA
}

// Group is one row label with a value per series; a NaN value draws no bar.
type Group struct {
	Label  string
	Values []float64
}

// Panel is a titled block of groups sharing one scale.
type Panel struct {
	Title  string
	Groups []Group
}

// Bars is a horizontal grouped bar chart.
type Bars struct {
	Title string
	// Unit follows every value label ("ms").
	Unit string
	// Format formats a value; default "%.1f".
	Format string
	Series []Series
	Panels []Panel
	// Notes are lines printed under the chart.
	Notes []string
	// Width of the image in pixels; default 1200.
	Width int
}

const (
	scale    = 2
	margin   = 24
	barH     = 18
	barGap   = 4
	groupGap = 14
	panelGap = 26
)

// PNG encodes the chart as a PNG image.
func (b Bars) PNG(w io.Writer) error {
	if len(b.Series) == 0 || len(b.Panels) == 0 {
		return errors.New("chart: no series or no panels")
	}
	width := b.Width
	if width == 0 {
		width = 1200
	}
	format := b.Format
	if format == "" {
		format = "%.1f"
	}
	lineH := textHeight(scale) + 8
	white := color.RGBA{255, 255, 255, 255}
	ink := color.RGBA{33, 37, 41, 255}
	grey := color.RGBA{134, 142, 150, 255}
	rule := color.RGBA{222, 226, 230, 255}

	labelW := 0
	for _, p := range b.Panels {
		for _, g := range p.Groups {
			if len(g.Values) != len(b.Series) {
				return fmt.Errorf("chart: group %q has %d values for %d series", g.Label, len(g.Values), len(b.Series))
			}
			labelW = max(labelW, textWidth(g.Label, scale))
		}
	}
	valueW := textWidth(fmt.Sprintf(format, 99999.9)+" "+b.Unit, scale)
	barX := margin + labelW + 12
	barMax := width - barX - valueW - margin - 8
	if barMax < 100 {
		return errors.New("chart: labels too long for the width")
	}

	perLine := (width - 2*margin + glyphGap*scale) / ((glyphW + glyphGap) * scale)
	var notes []string
	for _, n := range b.Notes {
		notes = append(notes, wrap(n, perLine)...)
	}

	height := margin + lineH + 6 + lineH + 10 // title, legend
	for _, p := range b.Panels {
		height += lineH + 4
		height += len(p.Groups)*(len(b.Series)*(barH+barGap)-barGap) + (len(p.Groups)-1)*groupGap
		height += panelGap
	}
	height += len(notes)*lineH + margin

	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), &image.Uniform{white}, image.Point{}, draw.Src)

	y := margin
	drawText(img, margin, y, b.Title, scale, ink)
	y += lineH + 6
	x := margin
	for _, s := range b.Series {
		fill(img, image.Rect(x, y, x+textHeight(scale), y+textHeight(scale)), s.Color)
		x += textHeight(scale) + 6
		drawText(img, x, y, s.Name, scale, ink)
		x += textWidth(s.Name, scale) + 24
	}
	y += lineH + 10

	for _, p := range b.Panels {
		drawText(img, margin, y, p.Title, scale, ink)
		y += lineH
		fill(img, image.Rect(margin, y-6, width-margin, y-5), rule)
		y += 4
		top := 0.0
		for _, g := range p.Groups {
			for _, v := range g.Values {
				if !math.IsNaN(v) {
					top = math.Max(top, v)
				}
			}
		}
		if top == 0 {
			top = 1
		}
		for gi, g := range p.Groups {
			groupH := len(b.Series)*(barH+barGap) - barGap
			drawText(img, margin+labelW-textWidth(g.Label, scale), y+(groupH-textHeight(scale))/2, g.Label, scale, ink)
			for si, v := range g.Values {
				by := y + si*(barH+barGap)
				if math.IsNaN(v) {
					drawText(img, barX, by+(barH-textHeight(scale))/2, "n/a", scale, grey)
					continue
				}
				n := int(math.Round(v / top * float64(barMax)))
				fill(img, image.Rect(barX, by, barX+max(n, 1), by+barH), b.Series[si].Color)
				label := fmt.Sprintf(format, v) + " " + b.Unit
				drawText(img, barX+max(n, 1)+6, by+(barH-textHeight(scale))/2, label, scale, ink)
			}
			y += groupH
			if gi < len(p.Groups)-1 {
				y += groupGap
			}
		}
		y += panelGap
	}
	for _, n := range notes {
		drawText(img, margin, y, n, scale, grey)
		y += lineH
	}
	return png.Encode(w, img)
}

// fill paints r in c.
func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

// wrap breaks s into lines of at most n characters, at spaces where it can.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		for len([]rune(w)) > n { // a word longer than a line
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(w)
			lines, w = append(lines, string(r[:n])), string(r[n:])
		}
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= n:
			line += " " + w
		default:
			lines, line = append(lines, line), w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
