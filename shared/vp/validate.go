package vp

import (
	"strings"
	"unicode"
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

// CheckName validates an identifier such as an orchestrator or instance id
// (and every identity argument: from, to, createdBy, assignedTo, ...):
// text of at most MaxNameBytes that displays as what it is (NameProblem).
// Tenant ids are stricter still (ValidTenant); names stay free text
// because orchestrators are named in any script ("josé", compared after
// NFC and case folding).
func CheckName(op, field, v string, required bool) error {
	if err := CheckText(op, field, v, MaxNameBytes, required); err != nil {
		return err
	}
	if why := NameProblem(v); why != "" {
		return Errorf(op, KindInvalid, field, "%+q %s", v, why)
	}
	return nil
}

// NameProblem says why v cannot be a name, or "" when it can: no '#' (the
// store's key separator) or ',' (the channel separator); no control
// characters (C0, DEL, C1); no invisible formatting characters — the
// bidirectional overrides, embeddings, isolates and marks that make
// "user\u202Egnp.exe" display as "userexe.png", zero-width characters,
// the BOM; no line or paragraph separators, no space but U+0020 (a
// no-break space makes "alice\u00a0" look like "alice"), no space at
// either end; no private-use or non-characters. ASCII-only names take
// the fast path.
func NameProblem(v string) string {
	if v != "" && (v[0] == ' ' || v[len(v)-1] == ' ') {
		return "may not start or end with a space"
	}
	for _, r := range v {
		switch {
		case r == '#' || r == ',':
			return "may not contain '#' or ','"
		case r >= 0x20 && r < 0x7f:
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			return "may not contain control characters"
		case unicode.Is(unicode.Cf, r):
			return "may not contain invisible formatting characters (bidirectional overrides, zero-width characters)"
		case unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
			return "may not contain spaces other than U+0020 or line separators"
		case unicode.Is(unicode.Co, r) || r == utf8.RuneError || r&0xfffe == 0xfffe || (r >= 0xfdd0 && r <= 0xfdef):
			return "may not contain private-use or non-characters"
		}
	}
	return ""
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
