package fakecli

import (
	"fmt"
	"slices"
	"testing"
)

func TestCommanderGrammar(t *testing.T) {
	f := &Flavor{Style: Commander, Bool: []string{"-p", "-c"}, Value: []string{"--model", "-n"},
		Optional: []string{"-r", "--resume"}, Variadic: []string{"--tools"}}
	for _, c := range []struct {
		args []string
		want string // fmt of Values and Positional, or "error"
	}{
		{[]string{"--resume", "-p"}, "map[--resume:[] -p:[]] []"},
		{[]string{"--resume", "-"}, "map[--resume:[-]] []"},
		{[]string{"--resume", "-1"}, "error"},
		{[]string{"--resume=-p"}, "map[--resume:[-p]] []"},
		{[]string{"--model", "-p"}, "map[--model:[-p]] []"},
		{[]string{"--model"}, "error"},
		{[]string{"--tools", "a", "b", "-p", "c"}, "map[--tools:[a b] -p:[]] [c]"},
		{[]string{"--tools", "-x", "b"}, "map[--tools:[-x b]] []"},
		{[]string{"--tools=a", "b"}, "map[--tools:[a]] [b]"},
		{[]string{"-pc"}, "map[-c:[] -p:[]] []"},
		{[]string{"-pcrID"}, "map[-c:[] -p:[] -r:[ID]] []"},
		{[]string{"-nX"}, "map[-n:[X]] []"},
		{[]string{"-px"}, "error"},
		{[]string{"--", "-p"}, "map[] [-p]"},
		{[]string{"-p=x"}, "error"},
	} {
		p, err := f.Parse(c.args)
		got := "error"
		if err == nil {
			got = fmt.Sprint(p.Values, p.Positional)
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
}

func TestYargsGrammar(t *testing.T) {
	f := &Flavor{Style: Yargs, Bool: []string{"--yolo", "-y", "--auto"}, Value: []string{"--model", "-m"},
		Optional: []string{"--resume", "-r", "--output-format"}, Variadic: []string{"--file", "-f", "--policy"},
		Once: []string{"--policy"}, Aliases: [][]string{{"--model", "-m"}, {"--resume", "-r"}, {"--yolo", "-y"}, {"--file", "-f"}}}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model=-x"}, "map[--model:[-x]] []"},
		{[]string{"--model", "-x"}, "error"},
		{[]string{"--model", "-"}, "map[--model:[-]] []"},
		{[]string{"--model", "-5"}, "map[--model:[-5]] []"},
		{[]string{"-m", "x"}, "map[--model:[x]] []"},
		{[]string{"--m=x"}, "map[--model:[x]] []"},
		{[]string{"--resume", "-y"}, "map[--resume:[] --yolo:[]] []"},
		{[]string{"--resume=\"id\""}, "map[--resume:[id]] []"},
		{[]string{"--model=\"id\""}, "map[--model:[\"id\"]] []"},
		{[]string{"--resume", "x", "y"}, "map[--resume:[x]] [y]"},
		{[]string{"--outputFormat", "json"}, "map[--output-format:[json]] []"},
		{[]string{"--auto", "true", "x"}, "map[--auto:[]] [x]"},
		{[]string{"--auto", "false"}, "map[--auto:[false]] []"},
		{[]string{"--no-auto"}, "map[--auto:[false]] []"},
		{[]string{"--auto=yes"}, "map[--auto:[false]] []"},
		{[]string{"-yr", "id"}, "map[--resume:[id] --yolo:[]] []"},
		{[]string{"-ym"}, "error"},
		{[]string{"-rx"}, "error"},
		{[]string{"-r=x"}, "map[--resume:[x]] []"},
		{[]string{"--file", "a", "b", "--auto", "c"}, "map[--auto:[] --file:[a b]] [c]"},
		{[]string{"--file=a", "b"}, "map[--file:[a b]] []"},
		{[]string{"--policy", "a", "b"}, "map[--policy:[a]] [b]"},
		{[]string{"--policy"}, "error"},
		{[]string{"--bogus"}, "error"},
		{[]string{"---", "--", "--auto"}, "map[] [--- --auto]"},
		{[]string{"-5", "-"}, "map[] [-5 -]"},
	} {
		p, err := f.Parse(c.args)
		got := "error"
		if err == nil {
			got = fmt.Sprint(p.Values, p.Positional)
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
}

func TestOptionArgs(t *testing.T) {
	p, err := Flavors["claude"].Parse([]string{"-p", "--allowedTools", "a", "b", "--model=m", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.OptionArgs(); !slices.Equal(got, []int{0, 1, 4}) {
		t.Fatalf("OptionArgs = %v", got)
	}
}
