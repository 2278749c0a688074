package driver_test

import (
	"fmt"

	"github.com/agentcli/agentcli/driver"
)

func ExampleCommanderPrompt() {
	fmt.Printf("%q\n", driver.CommanderPrompt("update"))
	fmt.Printf("%q\n", driver.CommanderPrompt("-v fix the build"))
	fmt.Printf("%q\n", driver.CommanderPrompt(""))
	// Output:
	// ["--" "update "]
	// ["--" "-v fix the build"]
	// []
}
