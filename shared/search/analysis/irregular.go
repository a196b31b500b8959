package analysis

import "strings"

// Term is the index term of a lower-case token: its base form when it is
// an irregular English verb or noun form ("went" -> "go", "children" ->
// "child"), then its Porter stem. The Porter stemmer only strips
// suffixes, so without the table a question in the present tense ("when
// did she buy ...") misses a text in the past tense ("I bought ...").
func Term(tok string) string {
	if b, ok := irregular[tok]; ok {
		tok = b
	}
	return Stem(tok)
}

// irregular maps irregular English past tenses, past participles and
// plurals to their base form. Forms that are as often another word
// ("left", "saw", "rose", "ground", "wound", "born", "bit", "shot") are
// left out: mapping them would merge unrelated words.
var irregular = func() map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(`
arise arose arisen
awake awoke awoken
beat beaten
become became
begin began begun
bend bent
bet
bleed bled
blow blew blown
break broke broken
breed bred
bring brought
build built
burn burnt
buy bought
catch caught
choose chose chosen
cling clung
come came
cost
creep crept
cut
deal dealt
dig dug
do did done
draw drew drawn
dream dreamt
drink drank drunk
drive drove driven
eat ate eaten
fall fell fallen
feed fed
feel felt
fight fought
find found
flee fled
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
get got gotten
give gave given
go went gone
grow grew grown
hang hung
have had
hear heard
hide hid hidden
hit
hold held
hurt
keep kept
kneel knelt
know knew known
lead led
lean leant
learn learnt
leave
lend lent
lie lain
light lit
lose lost
make made
mean meant
meet met
mistake mistook mistaken
overcome overcame
pay paid
prove proven
put
quit
read
ride rode ridden
ring rang rung
run ran
say said
see seen
seek sought
sell sold
send sent
set
shake shook shaken
shine shone
show shown
shrink shrank shrunk
shut
sing sang sung
sink sank sunk
sit sat
sleep slept
slide slid
speak spoke spoken
speed sped
spend spent
spin spun
split
spread
stand stood
steal stole stolen
stick stuck
sting stung
stink stank stunk
strike struck
strive strove striven
swear swore sworn
sweep swept
swim swam swum
swing swung
take took taken
teach taught
tear tore torn
tell told
think thought
throw threw thrown
understand understood
upset
wake woke woken
wear wore worn
weave wove woven
weep wept
win won
withdraw withdrew withdrawn
write wrote written
child children
person people
man men
woman women
foot feet
tooth teeth
mouse mice
goose geese
`), "\n") {
		f := strings.Fields(line)
		for _, form := range f[1:] {
			m[form] = f[0]
		}
	}
	return m
}()
