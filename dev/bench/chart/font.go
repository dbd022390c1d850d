package chart

import (
	"image"
	"image/color"
	"unicode"
)

// glyph returns r in a 5×7 bitmap font: seven rows of five cells, '#'
// set. It knows capitals, digits and some punctuation.
func glyph(r rune) ([7]string, bool) {
	switch r {
	case 'A':
		return [7]string{" ### ", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"}, true
	case 'B':
		return [7]string{"#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### "}, true
	case 'C':
		return [7]string{" ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### "}, true
	case 'D':
		return [7]string{"#### ", "#   #", "#   #", "#   #", "#   #", "#   #", "#### "}, true
	case 'E':
		return [7]string{"#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#####"}, true
	case 'F':
		return [7]string{"#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#    "}, true
	case 'G':
		return [7]string{" ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####"}, true
	case 'H':
		return [7]string{"#   #", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"}, true
	case 'I':
		return [7]string{" ### ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "}, true
	case 'J':
		return [7]string{"  ###", "   # ", "   # ", "   # ", "   # ", "#  # ", " ##  "}, true
	case 'K':
		return [7]string{"#   #", "#  # ", "# #  ", "##   ", "# #  ", "#  # ", "#   #"}, true
	case 'L':
		return [7]string{"#    ", "#    ", "#    ", "#    ", "#    ", "#    ", "#####"}, true
	case 'M':
		return [7]string{"#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #"}, true
	case 'N':
		return [7]string{"#   #", "#   #", "##  #", "# # #", "#  ##", "#   #", "#   #"}, true
	case 'O':
		return [7]string{" ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "}, true
	case 'P':
		return [7]string{"#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    "}, true
	case 'Q':
		return [7]string{" ### ", "#   #", "#   #", "#   #", "# # #", "#  # ", " ## #"}, true
	case 'R':
		return [7]string{"#### ", "#   #", "#   #", "#### ", "# #  ", "#  # ", "#   #"}, true
	case 'S':
		return [7]string{" ####", "#    ", "#    ", " ### ", "    #", "    #", "#### "}, true
	case 'T':
		return [7]string{"#####", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  "}, true
	case 'U':
		return [7]string{"#   #", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "}, true
	case 'V':
		return [7]string{"#   #", "#   #", "#   #", "#   #", "#   #", " # # ", "  #  "}, true
	case 'W':
		return [7]string{"#   #", "#   #", "#   #", "# # #", "# # #", "# # #", " # # "}, true
	case 'X':
		return [7]string{"#   #", "#   #", " # # ", "  #  ", " # # ", "#   #", "#   #"}, true
	case 'Y':
		return [7]string{"#   #", "#   #", " # # ", "  #  ", "  #  ", "  #  ", "  #  "}, true
	case 'Z':
		return [7]string{"#####", "    #", "   # ", "  #  ", " #   ", "#    ", "#####"}, true
	case '0':
		return [7]string{" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "}, true
	case '1':
		return [7]string{"  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "}, true
	case '2':
		return [7]string{" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"}, true
	case '3':
		return [7]string{"#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "}, true
	case '4':
		return [7]string{"   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "}, true
	case '5':
		return [7]string{"#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "}, true
	case '6':
		return [7]string{"  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "}, true
	case '7':
		return [7]string{"#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "}, true
	case '8':
		return [7]string{" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "}, true
	case '9':
		return [7]string{" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "}, true
	case ' ':
		return [7]string{"     ", "     ", "     ", "     ", "     ", "     ", "     "}, true
	case '.':
		return [7]string{"     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "}, true
	case ',':
		return [7]string{"     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   "}, true
	case ':':
		return [7]string{"     ", " ##  ", " ##  ", "     ", " ##  ", " ##  ", "     "}, true
	case '-':
		return [7]string{"     ", "     ", "     ", "#####", "     ", "     ", "     "}, true
	case '+':
		return [7]string{"     ", "  #  ", "  #  ", "#####", "  #  ", "  #  ", "     "}, true
	case '=':
		return [7]string{"     ", "     ", "#####", "     ", "#####", "     ", "     "}, true
	case '/':
		return [7]string{"     ", "    #", "   # ", "  #  ", " #   ", "#    ", "     "}, true
	case '(':
		return [7]string{"   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "}, true
	case ')':
		return [7]string{" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "}, true
	case '%':
		return [7]string{"##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"}, true
	case '#':
		return [7]string{" # # ", " # # ", "#####", " # # ", "#####", " # # ", " # # "}, true
	case '<':
		return [7]string{"   # ", "  #  ", " #   ", "#    ", " #   ", "  #  ", "   # "}, true
	case '>':
		return [7]string{" #   ", "  #  ", "   # ", "    #", "   # ", "  #  ", " #   "}, true
	case '_':
		return [7]string{"     ", "     ", "     ", "     ", "     ", "     ", "#####"}, true
	case '×':
		return [7]string{"     ", "#   #", " # # ", "  #  ", " # # ", "#   #", "     "}, true
	case 'µ':
		return [7]string{"     ", "     ", "#   #", "#   #", "#   #", "#### ", "#    "}, true
	case ';':
		return [7]string{"     ", " ##  ", " ##  ", "     ", " ##  ", "  #  ", " #   "}, true
	case '\'':
		return [7]string{"  #  ", "  #  ", " #   ", "     ", "     ", "     ", "     "}, true
	case '"':
		return [7]string{" # # ", " # # ", "     ", "     ", "     ", "     ", "     "}, true
	case '?':
		return [7]string{" ### ", "#   #", "    #", "   # ", "  #  ", "     ", "  #  "}, true
	}
	return [7]string{}, false
}

// box is drawn for a character without a glyph.
func box() [7]string {
	return [7]string{"#####", "#   #", "#   #", "#   #", "#   #", "#   #", "#####"}
}

const (
	glyphW   = 5
	glyphH   = 7
	glyphGap = 1
)

// textWidth is the width in pixels of s drawn at scale.
func textWidth(s string, scale int) int {
	n := len([]rune(s))
	if n == 0 {
		return 0
	}
	return (n*(glyphW+glyphGap) - glyphGap) * scale
}

// textHeight is the height in pixels of a line drawn at scale.
func textHeight(scale int) int { return glyphH * scale }

// drawText draws s with its top-left corner at (x, y).
func drawText(img *image.RGBA, x, y int, s string, scale int, c color.Color) {
	for _, r := range s {
		g, ok := glyph(r)
		if !ok {
			g, ok = glyph(unicode.ToUpper(r))
		}
		if !ok {
			g = box()
		}
		for row, line := range g {
			for col, cell := range line {
				if cell != '#' {
					continue
				}
				fill(img, image.Rect(x+col*scale, y+row*scale, x+(col+1)*scale, y+(row+1)*scale), c)
			}
		}
		x += (glyphW + glyphGap) * scale
	}
}
