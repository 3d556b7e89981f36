package search

import "strings"

// DefaultSynonyms is the built-in table of interchangeable words: general
// English and developer vocabulary, never the name of one catalog's tool.
// Each line is one group; members are separated by commas and may be
// phrases ("pull request"). A query word that belongs to a group also looks
// for the other members, at Options.SynonymWeight of an exact match.
//
// To extend it, add a member to a group or a new line here (and a case to
// TestSynonymExpansion), or pass Options.ExtraSynonyms for catalog-specific
// vocabulary. Keep groups tight: members should be substitutable in a
// request ("remove a file" = "delete a file"), not merely related.
var DefaultSynonyms = []string{
	// verbs
	"create, add, new, make, insert, register, set up, generate, open, append",
	"delete, remove, destroy, drop, erase, purge, forget, uninstall, get rid of",
	"list, get, show, fetch, retrieve, read, view, display, enumerate, see, load, which, what's in",
	"search, find, query, lookup, look up, grep, seek",
	"update, edit, modify, change, alter, patch, set, switch",
	"run, execute, exec, invoke, trigger, launch, start",
	"start, begin, launch, initiate, kick off",
	"stop, terminate, kill, halt, abort, cancel, hang up",
	"save, store, write, persist, put",
	"memory, remember, memorize, recall, forget",
	"send, post, deliver",
	"reply, answer, respond, response",
	"copy, clone, fork, duplicate",
	"move, relocate, rename",
	"deploy, release, ship, publish, install",
	"rollback, roll back, revert, undo",
	"restart, reboot, reload",
	"navigate, go to, visit, browse, open url",
	"click, press, tap",
	"hover, mouse over",
	"type, enter",
	"input, field, box, text box, textbox",
	"upload, attach, put",
	"download, export",
	"scrape, extract",
	"monitor, watch, track",
	"notify, alert, notification",
	"describe, explain, detail, inspect",
	"count, how many, number of, total",
	"check, verify, validate",
	"compare, diff",
	"summarize, summary, overview",
	"schedule, cron",
	"visualize, plot, chart, graph, diagram",
	// nouns
	"file, document",
	"directory, dir, folder",
	"repository, repo",
	"pull request, pr, merge request, mr",
	"issue, bug, ticket, defect",
	"error, exception, crash, failure, fail, fault",
	"comment, note, remark",
	"message, msg",
	"sms, text message",
	"database, db",
	"kubernetes, k8s",
	"configuration, config, setting, settings, preference, option",
	"environment, env",
	"variable, var",
	"environment variable, env var",
	"application, app",
	"organization, org",
	"information, info, detail, metadata",
	"statistic, stat, metric",
	"user, member, person, people, account, who",
	"customer, client",
	"credential, secret, password",
	"image, picture, photo, img, screenshot",
	"screenshot, screen capture, screen shot, screengrab",
	"dialog, popup, modal",
	"terminal, shell, console, command line",
	"webpage, web page, website, site, page",
	"internet, web, online",
	"link, url",
	"documentation, docs, doc, manual, reference",
	"price, cost, pricing, fee",
	"invoice, bill",
	"coupon, discount, promo code, promotion",
	"size, big, large, how big",
	"tree, hierarchy",
	"virtual machine, vm",
	"javascript, js",
	"typescript, ts",
	"python, py",
	"markdown, md",
	"yaml, yml",
	"postgres, postgresql, pg",
	"mongo, mongodb",
	"identifier, id",
	"email, e-mail, mail",
	"allow, permit, authorize",
	"current, now, right now, currently, present",
	"multiple, several, many, batch, bulk",
	"associate, link, relate",
	"coordinate, latitude, longitude, lat, lng, geocode",
	"elevation, altitude, height, above sea level",
	"refund, money back, reimburse",
	"balance, funds, money",
	"performance, speed, latency, slow, fast",
	"aggregate, aggregation, group by",
	"sum, add up, add, total",
	"record, row, entry",
	"column, field, attribute, property",
	"enable, turn on, activate, switch on",
	"disable, turn off, deactivate, switch off",
}

// synonymTable maps an analysed phrase (stems joined by a space) to the
// other members of its groups, each as a sequence of stems. It is built
// once per Index and read-only afterwards.
type synonymTable struct {
	alternatives map[string][][]string
	maxPhrase    int // longest member, in words
}

func newSynonymTable(groups ...[]string) *synonymTable {
	t := &synonymTable{alternatives: map[string][][]string{}, maxPhrase: 1}
	for _, lines := range groups {
		for _, line := range lines {
			var members [][]string
			for _, raw := range strings.Split(line, ",") {
				member := analyzePhrase(raw)
				if len(member) == 0 {
					continue
				}
				members = append(members, member)
				t.maxPhrase = max(t.maxPhrase, len(member))
			}
			for i, m := range members {
				key := strings.Join(m, " ")
				for j, other := range members {
					if i != j && !containsPhrase(t.alternatives[key], other) && strings.Join(other, " ") != key {
						t.alternatives[key] = append(t.alternatives[key], other)
					}
				}
			}
		}
	}
	return t
}

// analyzePhrase stems every word of a synonym member, keeping stop words:
// members such as "go to" and "how many" consist of them.
func analyzePhrase(text string) []string {
	var out []string
	splitWords(text, func(w string) { out = append(out, stem(w)) })
	return out
}

func containsPhrase(list [][]string, p []string) bool {
	for _, q := range list {
		if strings.Join(q, " ") == strings.Join(p, " ") {
			return true
		}
	}
	return false
}
