package fingerprint_test

var frameCases = []struct{ name, stack, want string }{
	{"v8", "Error: x\n    at handler (../convex/users.ts:12:9)", "handler (../convex/users.ts)"},
}
