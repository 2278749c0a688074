package jsonscan_test

import (
	"fmt"

	"github.com/agentcli/agentcli/driver/jsonscan"
)

// A parser reads the members it needs, in any order, and lets the rest be
// skipped. Discriminators are read as views (no allocation).
func ExampleDecoder() {
	line := []byte(`{"session_id":"s1","type":"stream_event","uuid":"u","event":{"delta":{"text":"Hi \"you\"\n","type":"text_delta"},"type":"content_block_delta","index":0}}`)
	var d jsonscan.Decoder
	d.Reset(line)
	var typ, deltaType []byte
	var text string
	for key := range d.Object() {
		switch string(key) {
		case "type":
			typ, _ = d.StrBytes()
		case "event":
			for key := range d.Object() {
				if string(key) != "delta" {
					continue
				}
				for key := range d.Object() {
					switch string(key) {
					case "type":
						deltaType, _ = d.StrBytes()
					case "text":
						text = d.Str()
					}
				}
			}
		}
	}
	if err := d.Finish(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %s %q\n", typ, deltaType, text)
	// Output: stream_event text_delta "Hi \"you\"\n"
}
