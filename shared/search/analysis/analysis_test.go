package analysis

import (
	"reflect"
	"testing"
)

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "valenci": "valenc", "digitizer": "digit", "conformabli": "conform",
		"radicalli": "radic", "differentli": "differ", "vileli": "vile", "analogousli": "analog",
		"vietnamization": "vietnam", "predication": "predic", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous", "formaliti": "formal",
		"sensitiviti": "sensit", "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
		"formalize": "formal", "electriciti": "electr", "electrical": "electr", "hopeful": "hope",
		"goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer",
		"airliner": "airlin", "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
		"irritant": "irrit", "replacement": "replac", "adjustment": "adjust", "dependent": "depend",
		"adoption": "adopt", "homologou": "homolog", "communism": "commun", "activate": "activ",
		"angulariti": "angular", "homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler",
		"probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
		"generalization": "gener", "running": "run", "is": "is", "café": "café", "x1": "x1",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                nil,
		"  ?!  ":                          nil,
		`Hello, "World"! NEAR(a b) OR x*`: {"hello", "world", "near", "a", "b", "or", "x"},
		"Café Noël — Ångström":            {"cafe", "noel", "angstrom"},
		"Anna's 2 dogs; e-mail x_y":       {"anna", "s", "2", "dogs", "e", "mail", "x", "y"},
		"東京タワー 日本":                        {"東京タワー", "日本"},
		"ＦＵＬＬ width":                      {"full", "width"},
	} {
		if got := Tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Content("What did Anna's dog eat in 2023?"); !reflect.DeepEqual(got, []string{"anna", "dog", "eat", "2023"}) {
		t.Errorf("Content = %q", got)
	}
}

func TestTerm(t *testing.T) {
	for in, want := range map[string]string{
		// irregular forms meet their base form (then the Porter stem)
		"went": "go", "gone": "go", "go": "go", "bought": "bui", "buy": "bui",
		"ran": "run", "running": "run", "children": "child", "child": "child",
		"taught": "teach", "met": "meet", "wrote": "write", "written": "write",
		// forms that are as often another word are left alone
		"left": "left", "saw": "saw", "rose": "rose", "ground": "ground",
		// everything else is Stem
		"adoption": "adopt", "café": "café", "2023": "2023",
	} {
		if got := Term(in); got != want {
			t.Errorf("Term(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompounds(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                   nil,
		"no hyphen here - or -there":         nil,
		"De-stress, e-mail and a road-trip!": {"destress", "email", "roadtrip"},
		"state-of-the-art x-1":               {"stateoftheart", "x1"},
		"naïve-ish":                          nil,
	} {
		if got := Compounds(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Compounds(%q) = %q, want %q", in, got, want)
		}
	}
}
