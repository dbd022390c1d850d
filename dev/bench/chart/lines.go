package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
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

// curveH is the height of one curve's panel, in points.
const curveH = 150

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
	f, err := newFonts()
	if err != nil {
		return err
	}
	pageW := vg.Length(width) * vg.Inch / dpi
	notes, noteStyle, notesH := f.notes(l.Notes, pageW)
	titleStyle := f.style(f.bold, titleSize, ink)
	height := padding + titleStyle.Height(l.Title) + 8 + vg.Length(len(l.Curves))*(curveH+14) + notesH + padding
	pg := newPage(f, width, height)
	pg.text(titleStyle, l.Title)
	pg.y -= 6
	for _, c := range l.Curves {
		pl := f.plot(c.Title)
		xys := make(plotter.XYs, len(c.X))
		top := 0.0
		for i := range c.X {
			xys[i] = plotter.XY{X: c.X[i], Y: c.Y[i]}
			top = math.Max(top, c.Y[i])
		}
		if top == 0 {
			top = 1
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("chart: curve %q: %w", c.Title, err)
		}
		line.Color, line.Width = c.Color, 1.5
		grid := plotter.NewGrid()
		grid.Vertical.Width = 0
		grid.Horizontal.Color = rule
		pl.Add(grid, line)
		pl.X.Min, pl.X.Max = xmin, xmax
		pl.Y.Min, pl.Y.Max = 0, top*1.15
		pl.X.Label.Text, pl.Y.Label.Text = l.XUnit, c.Unit
		pg.draw(pl, curveH)
		pg.y -= 14
	}
	pg.text(noteStyle, notes...)
	_, err = vgimg.PngCanvas{Canvas: pg.img}.WriteTo(w)
	return err
}
