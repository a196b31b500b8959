package vp

// Checks of short texts shared by the diary, briefing, component and
// business-unit write paths (and by keyword search, which checks a topic
// the way briefings store it).

// CheckTextList validates a list of short texts: at most maxItems entries,
// each non-empty and within maxBytes.
func CheckTextList(op, field string, items []string, maxItems, maxBytes int) error {
	if len(items) > maxItems {
		return Errorf(op, KindTooLarge, field, "has %d entries; the limit is %d", len(items), maxItems)
	}
	for _, v := range items {
		if err := CheckText(op, field, v, maxBytes, true); err != nil {
			return err
		}
	}
	return nil
}

// CheckKeyText validates text that becomes part of a store key: CheckText
// plus no control characters.
func CheckKeyText(op, field, v string, max int, required bool) error {
	if err := CheckText(op, field, v, max, required); err != nil {
		return err
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return Errorf(op, KindInvalid, field, "%q may not contain control characters", v)
		}
	}
	return nil
}
