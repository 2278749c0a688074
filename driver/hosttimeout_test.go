package driver_test

import (
	"fmt"

	"github.com/agentcli/agentcli/driver"
)

func ExampleHostToolTimeout() {
	// In the units the CLIs' settings take.
	fmt.Println(driver.HostToolTimeout.Milliseconds(), "ms")
	fmt.Println(int64(driver.HostToolTimeout.Seconds()), "s")
	fmt.Printf("%.1f days\n", driver.HostToolTimeout.Hours()/24)
	// Output:
	// 2147483647 ms
	// 2147483 s
	// 24.9 days
}
