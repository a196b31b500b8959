// Command gen writes wordnet.bin.gz, the table of embed/concept, from the
// WordNet 3.0 files of Debian's wordnet-base package:
//
//	sudo apt-get install wordnet-base   # or: apt-get download wordnet-base && dpkg -x wordnet-base_*.deb dir
//	go generate ./shared/embed/concept
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"

	"github.com/vantagepeers/vantagepeers/shared/embed/concept/internal/wnbuild"
)

func main() {
	src := flag.String("src", "/usr/share/wordnet", "the folder of WordNet 3.0's dict files (data.noun, index.noun, cntlist.rev, noun.exc, ...)")
	out := flag.String("out", "wordnet.bin.gz", "the table to write")
	flag.Parse()
	raw, err := wnbuild.Build(*src, wnbuild.Default)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	var b bytes.Buffer
	// No name and no time in the header: the same WordNet gives the same file.
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, err = zw.Write(raw)
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = os.WriteFile(*out, b.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Printf("gen: %s: %d bytes (%d uncompressed)\n", *out, b.Len(), len(raw))
}
