package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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

// Heights, in points.
const (
	barH      = 7  // one bar
	groupGap  = 6  // between two groups
	panelPad  = 44 // a panel's title and X axis
	legendRow = 14
)

// PNG encodes the chart as a PNG image.
func (b Bars) PNG(w io.Writer) error {
	if len(b.Series) == 0 || len(b.Panels) == 0 {
		return errors.New("chart: no series or no panels")
	}
	for _, p := range b.Panels {
		for _, g := range p.Groups {
			if len(g.Values) != len(b.Series) {
				return fmt.Errorf("chart: group %q has %d values for %d series", g.Label, len(g.Values), len(b.Series))
			}
		}
	}
	width := b.Width
	if width == 0 {
		width = 1200
	}
	format := b.Format
	if format == "" {
		format = "%.1f"
	}
	f, err := newFonts()
	if err != nil {
		return err
	}
	pageW := vg.Length(width) * vg.Inch / dpi
	notes, noteStyle, notesH := f.notes(b.Notes, pageW)
	titleStyle := f.style(f.bold, titleSize, ink)
	height := padding + titleStyle.Height(b.Title) + 6 + legendRow + 6
	panelH := make([]vg.Length, len(b.Panels))
	for i, p := range b.Panels {
		panelH[i] = panelPad + vg.Length(len(p.Groups))*(vg.Length(len(b.Series))*barH+groupGap)
		height += panelH[i] + 8
	}
	height += notesH + padding

	pg := newPage(f, width, height)
	pg.text(titleStyle, b.Title)
	pg.y -= 4
	b.legend(pg)
	for i, p := range b.Panels {
		pl, err := b.panel(f, p, format)
		if err != nil {
			return err
		}
		pg.draw(pl, panelH[i])
		pg.y -= 8
	}
	pg.text(noteStyle, notes...)
	_, err = vgimg.PngCanvas{Canvas: pg.img}.WriteTo(w)
	return err
}

// legend draws a swatch and the name of each series on one row.
func (b Bars) legend(pg *page) {
	st := pg.f.style(pg.f.regular, textSize, ink)
	x := vg.Length(padding)
	for _, s := range b.Series {
		sw := vg.Length(8)
		pg.dc.SetColor(s.Color)
		pg.dc.Fill(rect(x, pg.y-sw-1, x+sw, pg.y-1))
		x += sw + 4
		pg.dc.FillText(st, vg.Point{X: x, Y: pg.y}, s.Name)
		x += width(st, s.Name) + 14
	}
	pg.y -= legendRow
}

func rect(x0, y0, x1, y1 vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: x0, Y: y0})
	p.Line(vg.Point{X: x1, Y: y0})
	p.Line(vg.Point{X: x1, Y: y1})
	p.Line(vg.Point{X: x0, Y: y1})
	p.Close()
	return p
}

// panel is one panel's plot: a group per row (the first on top), a bar per
// series (the first on top), each labelled with its value.
func (b Bars) panel(f *fonts, p Panel, format string) (*plot.Plot, error) {
	pl := f.plot(p.Title)
	n, s := len(p.Groups), len(b.Series)
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
	grid := plotter.NewGrid()
	grid.Horizontal.Width = 0
	grid.Vertical.Color = rule
	pl.Add(grid)
	for si, ser := range b.Series {
		vals := make(plotter.Values, n)
		labels := plotter.XYLabels{}
		for gi, g := range p.Groups {
			row := n - 1 - gi
			v := g.Values[si]
			label := fmt.Sprintf(format, v) + " " + b.Unit
			if math.IsNaN(v) {
				v, label = 0, "n/a"
			}
			vals[row] = v
			labels.XYs = append(labels.XYs, plotter.XY{X: v, Y: float64(row)})
			labels.Labels = append(labels.Labels, label)
		}
		offset := vg.Length(float64(s-1)/2-float64(si)) * barH
		bars, err := plotter.NewBarChart(vals, barH)
		if err != nil {
			return nil, fmt.Errorf("chart: panel %q: %w", p.Title, err)
		}
		bars.Horizontal = true
		bars.Color = ser.Color
		bars.LineStyle.Width = 0
		bars.Offset = offset
		vl, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, fmt.Errorf("chart: panel %q: %w", p.Title, err)
		}
		for i := range vl.TextStyle {
			vl.TextStyle[i] = f.style(f.regular, textSize-1, ink)
			vl.TextStyle[i].YAlign = draw.YCenter
		}
		vl.Offset = vg.Point{X: 3, Y: offset}
		pl.Add(bars, vl)
	}
	names := make([]string, n)
	for gi, g := range p.Groups {
		names[n-1-gi] = g.Label
	}
	pl.NominalY(names...)
	pl.Y.Tick.Label.XAlign, pl.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	pl.X.Min, pl.X.Max = 0, top*1.22 // room for the value labels
	pl.X.Label.Text = b.Unit
	return pl, nil
}
