package chart

import (
	"fmt"
	"image/color"
	"strings"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// dpi is the images' resolution: a Width of 1200 pixels is 600 points.
const dpi = 144

// Sizes of the text, in points.
const (
	titleSize = 11
	headSize  = 9
	textSize  = 8
	noteSize  = 7
	padding   = 12
)

var (
	ink  = color.RGBA{33, 37, 41, 255}
	grey = color.RGBA{108, 117, 125, 255}
	rule = color.RGBA{222, 226, 230, 255}
)

// fonts is the Go typeface, regular and bold, as gonum's text handler
// wants it.
type fonts struct {
	handler text.Handler
	regular font.Font
	bold    font.Font
}

func newFonts() (*fonts, error) {
	regular, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("chart: the Go font: %w", err)
	}
	bold, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("chart: the Go bold font: %w", err)
	}
	f := &fonts{
		regular: font.Font{Typeface: "Go"},
		bold:    font.Font{Typeface: "Go", Weight: xfont.WeightBold},
	}
	f.handler = text.Plain{Fonts: font.NewCache(font.Collection{
		{Font: f.regular, Face: regular},
		{Font: f.bold, Face: bold},
	})}
	return f, nil
}

// style is a text style in f's font.
func (f *fonts) style(fnt font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(fnt, size), Handler: f.handler, XAlign: draw.XLeft, YAlign: draw.YTop}
}

// plot returns a plot whose every text is in the Go font.
func (f *fonts) plot(title string) *plot.Plot {
	p := plot.New()
	p.TextHandler = f.handler
	p.Title.Text = title
	p.Title.TextStyle = f.style(f.bold, headSize, ink)
	p.Title.TextStyle.XAlign = draw.XLeft
	p.Title.Padding = 4
	p.Legend.TextStyle = f.style(f.regular, textSize, ink)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = f.style(f.regular, textSize, grey)
		a.Tick.Label = f.style(f.regular, textSize, ink)
		a.Tick.Label.XAlign, a.Tick.Label.YAlign = draw.XCenter, draw.YTop
		a.Color, a.Tick.Color = grey, grey
	}
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	return p
}

// width is how wide s is in style st.
func width(st text.Style, s string) vg.Length {
	w, _, _ := st.Handler.Box(s, st.Font)
	return w
}

// wrap breaks s into lines no wider than w in style st, at spaces where it
// can.
func wrap(st text.Style, s string, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case width(st, line+" "+word) <= w:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// page is an image being drawn top-down: a title, rows of content, notes.
type page struct {
	f    *fonts
	img  *vgimg.Canvas
	dc   draw.Canvas
	w, y vg.Length // width; the top of what is drawn next
}

func newPage(f *fonts, widthPx int, height vg.Length) *page {
	w := vg.Length(widthPx) * vg.Inch / dpi
	img := vgimg.NewWith(vgimg.UseWH(w, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	return &page{f: f, img: img, dc: draw.New(img), w: w, y: height - padding}
}

// text writes lines in st from the left margin, each below the last.
func (p *page) text(st text.Style, lines ...string) {
	for _, l := range lines {
		p.dc.FillText(st, vg.Point{X: padding, Y: p.y}, l)
		p.y -= st.Height(l) + 3
	}
}

// notes are notes wrapped to the page's width w, their style and height.
func (f *fonts) notes(notes []string, w vg.Length) ([]string, text.Style, vg.Length) {
	st := f.style(f.regular, noteSize, grey)
	var lines []string
	for _, n := range notes {
		lines = append(lines, wrap(st, n, w-2*padding)...)
	}
	h := vg.Length(0)
	for _, l := range lines {
		h += st.Height(l) + 3
	}
	return lines, st, h
}

// draw draws pl in the band of height h below the page's current top.
func (p *page) draw(pl *plot.Plot, h vg.Length) {
	c := draw.Crop(p.dc, padding, -padding, 0, 0)
	c.Min.Y, c.Max.Y = p.y-h, p.y
	pl.Draw(c)
	p.y -= h
}
