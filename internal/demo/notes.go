package demo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolfold/toolfold"
	"github.com/toolfold/toolfold/internal/catalog"
)

// Limits that keep one client from filling the server's memory.
const (
	maxNoteKey   = 200
	maxNoteBytes = 1 << 20
	maxNotes     = 1000
	maxNoteTags  = 20
)

// noteStore is the notebook of one server. Every session of that server
// shares it (that is what a notebook is for); other servers have their own.
type noteStore struct {
	now   func() time.Time
	mu    sync.Mutex
	notes map[string]*note
}

type note struct {
	Key       string    `json:"key" jsonschema:"the note's key"`
	Text      string    `json:"text" jsonschema:"the note's text"`
	Tags      []string  `json:"tags" jsonschema:"the note's tags"`
	CreatedAt time.Time `json:"created_at" jsonschema:"when the note was first stored, RFC 3339"`
	UpdatedAt time.Time `json:"updated_at" jsonschema:"when the note was last stored, RFC 3339"`
}

func newNoteStore(now func() time.Time) *noteStore {
	return &noteStore{now: now, notes: map[string]*note{}}
}

func addNotesTools(g *toolfold.Group, s *noteStore) {
	tool(g, &mcp.Tool{
		Name:        "put_note",
		Description: "Store a note under a key, replacing any note already there, with optional tags. Returns whether it was new.",
		// Replacing a note loses its old text, hence destructive.
		Annotations: destructive("Put note", true),
	}, s.put)

	tool(g, &mcp.Tool{
		Name:        "get_note",
		Description: "Read the note stored under a key. Returns its text, tags and timestamps.",
		Annotations: readOnly("Get note"),
	}, s.get)

	tool(g, &mcp.Tool{
		Name:        "list_notes",
		Description: "List the stored notes, optionally only those with a tag or a key prefix. Returns each key with its tags, size, last update and the start of its text.",
		Annotations: readOnly("List notes"),
	}, s.list)

	tool(g, &mcp.Tool{
		Name:        "search_notes",
		Description: "Search notes for words (case-insensitive; every word must occur in the key, text or tags). Returns matching notes, best first, with a snippet around the first hit.",
		Annotations: readOnly("Search notes"),
	}, s.search)

	tool(g, &mcp.Tool{
		Name:        "delete_note",
		Description: "Delete the note stored under a key. Returns how many notes remain.",
		Annotations: destructive("Delete note", false),
	}, s.delete)
}

type putNoteInput struct {
	Key  string   `json:"key" jsonschema:"the note's key, up to 200 characters, e.g. todo or meeting/2024-05-01"`
	Text string   `json:"text" jsonschema:"the note's text, up to 1 MiB"`
	Tags []string `json:"tags,omitempty" jsonschema:"labels to find the note by, e.g. [\"work\", \"urgent\"]; up to 20"`
}

type putNoteOutput struct {
	Key       string    `json:"key" jsonschema:"the key the note is stored under"`
	Created   bool      `json:"created" jsonschema:"true for a new note, false when an existing note was replaced"`
	UpdatedAt time.Time `json:"updated_at" jsonschema:"when the note was stored, RFC 3339"`
	Notes     int       `json:"notes" jsonschema:"how many notes are stored now"`
}

func checkNoteKey(key string) (string, error) {
	k := strings.TrimSpace(key)
	switch {
	case k == "":
		return "", errEmpty("key", `a name for the note such as "todo"`)
	case utf8.RuneCountInString(k) > maxNoteKey:
		return "", fmt.Errorf("key is %d characters long: keep it to %d", utf8.RuneCountInString(k), maxNoteKey)
	}
	return k, nil
}

func (s *noteStore) put(_ context.Context, in putNoteInput) (putNoteOutput, error) {
	key, err := checkNoteKey(in.Key)
	if err != nil {
		return putNoteOutput{}, err
	}
	if len(in.Text) > maxNoteBytes {
		return putNoteOutput{}, fmt.Errorf("text is %d bytes: notes hold at most %d; store it in a file with write_file instead", len(in.Text), maxNoteBytes)
	}
	if len(in.Tags) > maxNoteTags {
		return putNoteOutput{}, fmt.Errorf("%d tags given: keep it to %d", len(in.Tags), maxNoteTags)
	}
	tags := []string{}
	for _, t := range in.Tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	n, exists := s.notes[key]
	if !exists {
		if len(s.notes) >= maxNotes {
			return putNoteOutput{}, fmt.Errorf("the notebook is full (%d notes): delete notes you no longer need with delete_note", maxNotes)
		}
		n = &note{Key: key, CreatedAt: now}
		s.notes[key] = n
	}
	n.Text, n.Tags, n.UpdatedAt = in.Text, tags, now
	return putNoteOutput{Key: key, Created: !exists, UpdatedAt: now, Notes: len(s.notes)}, nil
}

type noteKeyInput struct {
	Key string `json:"key" jsonschema:"the note's key"`
}

// missing explains a key that is not in the store. s.mu is held.
func (s *noteStore) missing(key string) error {
	if len(s.notes) == 0 {
		return fmt.Errorf("there is no note %q: the notebook is empty; store one with put_note", key)
	}
	keys := make([]string, 0, len(s.notes))
	for k := range s.notes {
		keys = append(keys, k)
	}
	msg := fmt.Sprintf("there is no note %q", key)
	if near := catalog.Nearest(key, keys, 3); len(near) > 0 {
		msg += fmt.Sprintf(": did you mean %s?", oneOf(near...))
	} else {
		msg += ": list_notes shows the keys"
	}
	return fmt.Errorf("%s", msg)
}

func (s *noteStore) get(_ context.Context, in noteKeyInput) (note, error) {
	key := strings.TrimSpace(in.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.notes[key]
	if !ok {
		return note{}, s.missing(key)
	}
	c := *n
	c.Tags = slices.Clone(n.Tags)
	return c, nil
}

type listNotesInput struct {
	Tag    string `json:"tag,omitempty" jsonschema:"only notes with this tag"`
	Prefix string `json:"prefix,omitempty" jsonschema:"only notes whose key starts with this, e.g. meeting/"`
}

type noteSummary struct {
	Key       string    `json:"key" jsonschema:"the note's key"`
	Tags      []string  `json:"tags" jsonschema:"the note's tags"`
	Bytes     int       `json:"bytes" jsonschema:"the length of its text in bytes"`
	UpdatedAt time.Time `json:"updated_at" jsonschema:"when it was last stored"`
	Preview   string    `json:"preview" jsonschema:"the first 80 characters of its text"`
}

type listNotesOutput struct {
	Count int           `json:"count" jsonschema:"how many notes are listed"`
	Total int           `json:"total" jsonschema:"how many notes are stored in all"`
	Notes []noteSummary `json:"notes" jsonschema:"the notes, by key"`
}

func (s *noteStore) list(_ context.Context, in listNotesInput) (listNotesOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := listNotesOutput{Total: len(s.notes), Notes: []noteSummary{}}
	for _, n := range s.notes {
		if in.Tag != "" && !slices.Contains(n.Tags, in.Tag) {
			continue
		}
		if !strings.HasPrefix(n.Key, in.Prefix) {
			continue
		}
		out.Notes = append(out.Notes, noteSummary{Key: n.Key, Tags: slices.Clone(n.Tags), Bytes: len(n.Text),
			UpdatedAt: n.UpdatedAt, Preview: preview(n.Text, 80)})
	}
	slices.SortFunc(out.Notes, func(a, b noteSummary) int { return strings.Compare(a.Key, b.Key) })
	out.Count = len(out.Notes)
	return out, nil
}

// preview shortens text to n characters on one line.
func preview(text string, n int) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) <= n {
		return t
	}
	return string([]rune(t)[:n-1]) + "…"
}

type searchNotesInput struct {
	Query string `json:"query" jsonschema:"words to look for, e.g. budget meeting; each must occur somewhere in the note"`
	Limit int    `json:"limit,omitempty" jsonschema:"return at most this many notes; default 10, at most 100"`
}

type noteMatch struct {
	Key     string   `json:"key" jsonschema:"the note's key"`
	Tags    []string `json:"tags" jsonschema:"the note's tags"`
	Score   int      `json:"score" jsonschema:"how often the words occur; hits in the key or tags count three times"`
	Snippet string   `json:"snippet" jsonschema:"the text around the first hit"`
}

type searchNotesOutput struct {
	Count   int         `json:"count" jsonschema:"how many notes are returned"`
	Matches []noteMatch `json:"matches" jsonschema:"the matching notes, best first"`
}

func (s *noteStore) search(_ context.Context, in searchNotesInput) (searchNotesOutput, error) {
	words := strings.Fields(strings.ToLower(in.Query))
	if len(words) == 0 {
		return searchNotesOutput{}, errEmpty("query", `one or more words such as "budget"`)
	}
	limit, err := limitOr(in.Limit, 10, 100, "limit")
	if err != nil {
		return searchNotesOutput{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := searchNotesOutput{Matches: []noteMatch{}}
	for _, n := range s.notes {
		text := strings.ToLower(n.Text)
		meta := strings.ToLower(n.Key + " " + strings.Join(n.Tags, " "))
		score := 0
		all := true
		for _, w := range words {
			hits := strings.Count(text, w) + 3*strings.Count(meta, w)
			if hits == 0 {
				all = false
				break
			}
			score += hits
		}
		if !all {
			continue
		}
		out.Matches = append(out.Matches, noteMatch{Key: n.Key, Tags: slices.Clone(n.Tags), Score: score, Snippet: snippet(n.Text, words)})
	}
	slices.SortFunc(out.Matches, func(a, b noteMatch) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Key, b.Key))
	})
	if len(out.Matches) > limit {
		out.Matches = out.Matches[:limit]
	}
	out.Count = len(out.Matches)
	return out, nil
}

// snippet cuts about 100 characters of text around the first word found.
func snippet(text string, words []string) string {
	runes := []rune(text)
	lower := []rune(strings.ToLower(text))
	if len(lower) != len(runes) {
		// Lower-casing changed the length (rare scripts): fall back to the
		// start of the text rather than misplace the cut.
		return preview(text, 100)
	}
	first := -1
	for _, w := range words {
		if i := strings.Index(string(lower), w); i >= 0 {
			ri := utf8.RuneCountInString(string(lower)[:i])
			if first < 0 || ri < first {
				first = ri
			}
		}
	}
	if first < 0 {
		return preview(text, 100)
	}
	start := max(0, first-40)
	end := min(len(runes), start+100)
	s := strings.Join(strings.Fields(string(runes[start:end])), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(runes) {
		s += "…"
	}
	return s
}

type deleteNoteOutput struct {
	Key     string `json:"key" jsonschema:"the key of the deleted note"`
	Deleted bool   `json:"deleted" jsonschema:"always true: a missing note is an error"`
	Notes   int    `json:"notes" jsonschema:"how many notes remain"`
}

func (s *noteStore) delete(_ context.Context, in noteKeyInput) (deleteNoteOutput, error) {
	key := strings.TrimSpace(in.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.notes[key]; !ok {
		return deleteNoteOutput{}, s.missing(key)
	}
	delete(s.notes, key)
	return deleteNoteOutput{Key: key, Deleted: true, Notes: len(s.notes)}, nil
}
