//go:build linux

package ptytest

import (
	"strconv"
	"strings"
)

// screen is the grid of cells a program draws on: enough of a VT100/xterm
// to follow full-screen programs that redraw only the cells that changed
// (cursor positioning and movement, erasing, scrolling regions, inserting
// and deleting lines and characters, the alternate screen). Attributes
// are ignored. Wide characters take two cells; combining characters none.
type screen struct {
	rows, cols int
	cells      [][]rune // current grid (main or alternate)
	main, alt  [][]rune
	inAlt      bool
	row, col   int
	wrapNext   bool // the last column was written: the next character wraps
	top, bot   int  // scrolling region, inclusive
	savedRow   int
	savedCol   int
}

func newScreen(rows, cols int) *screen {
	s := &screen{rows: rows, cols: cols, bot: rows - 1}
	s.main = s.blank()
	s.alt = s.blank()
	s.cells = s.main
	return s
}

func (s *screen) blank() [][]rune {
	g := make([][]rune, s.rows)
	for i := range g {
		g[i] = blankLine(s.cols)
	}
	return g
}

func blankLine(n int) []rune {
	l := make([]rune, n)
	for i := range l {
		l[i] = ' '
	}
	return l
}

// String returns the grid, one line per row, trailing blanks removed.
func (s *screen) String() string {
	var b strings.Builder
	for i, l := range s.cells {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, r := range strings.TrimRight(string(l), " ") {
			if r != 0 { // the right half of a wide character
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// width is the number of cells r takes: 0 for combining marks and
// zero-width characters, 2 for East Asian wide characters and emoji, 1
// otherwise (an approximation of wcwidth).
func width(r rune) int {
	switch {
	case r >= 0x300 && r <= 0x36f, r >= 0x200b && r <= 0x200f, r >= 0xfe00 && r <= 0xfe0f:
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1faff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// put writes r at the cursor and advances it.
func (s *screen) put(r rune) {
	w := width(r)
	if w == 0 {
		return
	}
	if s.wrapNext || s.col+w > s.cols {
		s.col = 0
		s.lineFeed()
	}
	s.wrapNext = false
	s.cells[s.row][s.col] = r
	if w == 2 {
		s.cells[s.row][s.col+1] = 0
	}
	s.col += w
	if s.col >= s.cols {
		s.col = s.cols - 1
		s.wrapNext = true
	}
}

// lineFeed moves the cursor down, scrolling at the bottom margin.
func (s *screen) lineFeed() {
	if s.row == s.bot {
		s.scrollUp(1)
	} else if s.row < s.rows-1 {
		s.row++
	}
}

func (s *screen) reverseIndex() {
	if s.row == s.top {
		s.scrollDown(1)
	} else if s.row > 0 {
		s.row--
	}
}

// scrollUp moves the lines of the scrolling region up by n.
func (s *screen) scrollUp(n int) {
	for ; n > 0; n-- {
		copy(s.cells[s.top:s.bot], s.cells[s.top+1:s.bot+1])
		s.cells[s.bot] = blankLine(s.cols)
	}
}

func (s *screen) scrollDown(n int) {
	for ; n > 0; n-- {
		copy(s.cells[s.top+1:s.bot+1], s.cells[s.top:s.bot])
		s.cells[s.top] = blankLine(s.cols)
	}
}

func (s *screen) control(c byte) {
	switch c {
	case '\r':
		s.col, s.wrapNext = 0, false
	case '\n', '\v', '\f':
		s.lineFeed()
		s.wrapNext = false
	case '\b':
		if s.col > 0 {
			s.col--
		}
		s.wrapNext = false
	case '\t':
		s.col = min((s.col/8+1)*8, s.cols-1)
	}
}

func (s *screen) esc(c byte) {
	switch c {
	case '7':
		s.savedRow, s.savedCol = s.row, s.col
	case '8':
		s.row, s.col, s.wrapNext = s.savedRow, s.savedCol, false
	case 'D':
		s.lineFeed()
	case 'E':
		s.col = 0
		s.lineFeed()
	case 'M':
		s.reverseIndex()
	case 'c':
		*s = *newScreen(s.rows, s.cols)
	}
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// csi applies the CSI sequence with final byte f and parameter bytes p.
func (s *screen) csi(f byte, p string) {
	private := strings.HasPrefix(p, "?")
	if p != "" && (p[0] < '0' || p[0] > '9') && p[0] != ';' && !private {
		return // other private sequences (>, <, =): modes this model ignores
	}
	var args []int
	for _, a := range strings.Split(strings.TrimPrefix(p, "?"), ";") {
		n, _ := strconv.Atoi(a)
		args = append(args, n)
	}
	arg := func(i, def int) int {
		if i < len(args) && args[i] > 0 {
			return args[i]
		}
		return def
	}
	if private {
		if f == 'h' || f == 'l' {
			for _, m := range args {
				if m == 1049 || m == 1047 || m == 47 {
					s.altScreen(f == 'h', m == 1049)
				}
			}
		}
		return
	}
	s.wrapNext = false
	switch f {
	case 'A':
		s.row = clamp(s.row-arg(0, 1), 0, s.rows-1)
	case 'B', 'e':
		s.row = clamp(s.row+arg(0, 1), 0, s.rows-1)
	case 'C', 'a':
		s.col = clamp(s.col+arg(0, 1), 0, s.cols-1)
	case 'D':
		s.col = clamp(s.col-arg(0, 1), 0, s.cols-1)
	case 'E':
		s.row, s.col = clamp(s.row+arg(0, 1), 0, s.rows-1), 0
	case 'F':
		s.row, s.col = clamp(s.row-arg(0, 1), 0, s.rows-1), 0
	case 'G', '`':
		s.col = clamp(arg(0, 1)-1, 0, s.cols-1)
	case 'd':
		s.row = clamp(arg(0, 1)-1, 0, s.rows-1)
	case 'H', 'f':
		s.row, s.col = clamp(arg(0, 1)-1, 0, s.rows-1), clamp(arg(1, 1)-1, 0, s.cols-1)
	case 'J':
		switch arg(0, 0) {
		case 0:
			s.eraseLine(s.row, s.col, s.cols)
			for r := s.row + 1; r < s.rows; r++ {
				s.cells[r] = blankLine(s.cols)
			}
		case 1:
			s.eraseLine(s.row, 0, s.col+1)
			for r := 0; r < s.row; r++ {
				s.cells[r] = blankLine(s.cols)
			}
		default:
			for r := range s.cells {
				s.cells[r] = blankLine(s.cols)
			}
		}
	case 'K':
		switch arg(0, 0) {
		case 0:
			s.eraseLine(s.row, s.col, s.cols)
		case 1:
			s.eraseLine(s.row, 0, s.col+1)
		default:
			s.eraseLine(s.row, 0, s.cols)
		}
	case 'X':
		s.eraseLine(s.row, s.col, s.col+arg(0, 1))
	case 'P':
		l := s.cells[s.row]
		n := min(arg(0, 1), s.cols-s.col)
		copy(l[s.col:], l[s.col+n:])
		s.eraseLine(s.row, s.cols-n, s.cols)
	case '@':
		l := s.cells[s.row]
		n := min(arg(0, 1), s.cols-s.col)
		copy(l[s.col+n:], l[s.col:s.cols-n])
		s.eraseLine(s.row, s.col, s.col+n)
	case 'L', 'M':
		if s.row < s.top || s.row > s.bot {
			return
		}
		top := s.top
		s.top = s.row
		if f == 'L' {
			s.scrollDown(min(arg(0, 1), s.bot-s.row+1))
		} else {
			s.scrollUp(min(arg(0, 1), s.bot-s.row+1))
		}
		s.top = top
		s.col = 0
	case 'S':
		s.scrollUp(min(arg(0, 1), s.bot-s.top+1))
	case 'T':
		s.scrollDown(min(arg(0, 1), s.bot-s.top+1))
	case 'r':
		top, bot := arg(0, 1)-1, arg(1, s.rows)-1
		if top < bot && bot < s.rows {
			s.top, s.bot = top, bot
			s.row, s.col = 0, 0
		}
	case 's':
		s.savedRow, s.savedCol = s.row, s.col
	case 'u':
		s.row, s.col = s.savedRow, s.savedCol
	}
}

// eraseLine blanks columns [from, to) of row.
func (s *screen) eraseLine(row, from, to int) {
	from, to = clamp(from, 0, s.cols), clamp(to, 0, s.cols)
	for c := from; c < to; c++ {
		s.cells[row][c] = ' '
	}
}

// altScreen switches to the alternate screen (on) or back; mode 1049 also
// saves and restores the cursor and clears the alternate screen.
func (s *screen) altScreen(on, saveCursor bool) {
	if on == s.inAlt {
		return
	}
	if on {
		if saveCursor {
			s.savedRow, s.savedCol = s.row, s.col
		}
		s.alt = s.blank()
		s.cells = s.alt
	} else {
		s.cells = s.main
		if saveCursor {
			s.row, s.col = s.savedRow, s.savedCol
		}
	}
	s.inAlt = on
	s.wrapNext = false
}
