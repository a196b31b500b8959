package concept

// DecodeTable decodes the embedded table afresh (loadTable does it once).
func DecodeTable() error {
	_, err := decode(wordnetTable)
	return err
}
