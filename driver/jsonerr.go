package driver

import "github.com/agentcli/agentcli/driver/jsonscan"

// ErrorMessage reads an error as CLIs print it, at d's position: a string,
// or the "message" member of an object ({"message", "code"} and the
// like); "" for anything else. The message may share the line's memory
// (see Wire).
func ErrorMessage(d *jsonscan.Decoder) string {
	if d.Kind() == jsonscan.String {
		s, _ := d.UnsafeStr()
		return s
	}
	msg := ""
	for k := range d.Object() {
		if string(k) == "message" {
			msg, _ = d.UnsafeStr()
		}
	}
	return msg
}
