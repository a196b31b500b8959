// Package listingtest helps tests of list tools.
package listingtest

// Tamper returns the cursor with one character in its middle changed. A
// middle character of base64 carries six real bits, unlike the last one
// (whose low bits may be padding that decoding ignores), so the decoded
// bytes always change.
func Tamper(cursor string) string {
	if cursor == "" {
		return "x"
	}
	b := []byte(cursor)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
