package driver_test

import (
	"fmt"

	"github.com/agentcli/agentcli/driver"
)

func ExampleEscapeAt() {
	fmt.Println(driver.EscapeAt("see @README.md, mail a@b.com, keep \\@x", nil))
	// Only an "@" followed by something other than a space starts a reference here.
	notSpace := func(after string) bool { return after != "" && after[0] != ' ' }
	fmt.Println(driver.EscapeAt("@x and @ y and @", notSpace))
	// Output:
	// see \@README.md, mail a\@b.com, keep \@x
	// \@x and @ y and @
}
