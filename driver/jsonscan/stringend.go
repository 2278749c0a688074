package jsonscan

// StringEnd returns the index in b of the quote that closes the JSON
// string whose contents start at b[i] (just after its opening quote), or
// -1 when b ends first. Only the end is found: the contents are not
// checked. It serves a reader that tracks where strings end in text it
// does not decode, such as the bracket depth of a document read line by
// line.
func StringEnd(b []byte, i int) int {
	if i < 0 || i > len(b) {
		return -1
	}
	return strEnd(b, i, i)
}
