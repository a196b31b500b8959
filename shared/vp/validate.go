package vp

import (
	"strings"
	"unicode/utf8"
)

// Limits on inputs. They are part of the contract: errors name them.
const (
	MaxNameBytes       = 64       // orchestrator, instance, tenant ids
	MaxChannelBytes    = 1024     // a channel expression ("pi,phi,broadcast")
	MaxMessageBytes    = 64 << 10 // message content
	MaxSummaryBytes    = 4 << 10  // presence summary
	MaxShortTextBytes  = 512      // names, roles, titles
	MaxRecipients      = 99       // receipts are written with their message in one transaction
	MaxReceiptIDsPerOp = 100
)

// ValidTenant reports whether t is a well-formed tenant id.
func ValidTenant(t string) bool { return ValidSlug(t) }

// ValidSlug reports whether s matches ^[a-z0-9][a-z0-9_-]{0,62}$: 1 to 63
// lower-case letters, digits, '-' and '_', starting with a letter or digit.
// (A loop, not a regexp: the bounded repetition compiled into a program
// that cost every process 1.5 ms at start.)
func ValidSlug(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// CheckText validates a free-text argument: valid UTF-8, no NUL, within max
// bytes, and non-empty when required.
func CheckText(op, field, v string, max int, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return Errorf(op, KindInvalid, field, "is required and must not be empty")
	}
	if len(v) > max {
		return &Error{Op: op, Kind: KindTooLarge, Field: field,
			Msg: "is " + itoa(len(v)) + " bytes; the limit is " + itoa(max) + " bytes — shorten it or split it"}
	}
	if !utf8.ValidString(v) {
		return Errorf(op, KindInvalid, field, "is not valid UTF-8")
	}
	if strings.ContainsRune(v, 0) {
		return Errorf(op, KindInvalid, field, "must not contain NUL characters")
	}
	return nil
}

// CheckName validates an identifier such as an orchestrator or instance id:
// text of at most MaxNameBytes with no '#' (the store's key separator), no
// ',' (the channel separator) and no control characters.
func CheckName(op, field, v string, required bool) error {
	if err := CheckText(op, field, v, MaxNameBytes, required); err != nil {
		return err
	}
	for _, r := range v {
		if r == '#' || r == ',' || r < 0x20 || r == 0x7f {
			return Errorf(op, KindInvalid, field, "%q may not contain '#', ',' or control characters", v)
		}
	}
	return nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
