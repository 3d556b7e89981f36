// Package demo is the built-in catalog that `toolfold demo` (or --demo)
// serves: about forty small tools that really work, need nothing
// installed and show what folding does to a tool surface.
//
// The catalog has six top-level groups, two of them with a child group:
//
//	text          change_case, slugify, word_count, regex_find, regex_replace, text_diff
//	text.encode   base64_encode, base64_decode, url_encode, url_decode, hex_encode, hex_decode, hash_text
//	math          calculate, statistics, convert_units, convert_base
//	time          current_time, convert_time_zone, parse_time, format_time, add_duration, time_between
//	json          json_validate, json_format, json_query, json_diff
//	notes         put_note, get_note, list_notes, search_notes, delete_note
//	files         list_files, read_file, write_file, file_info, make_directory, move_file, delete_file
//	files.search  glob_files, grep_files
//
// and one ungrouped, always-visible tool, about, which describes the demo.
//
// Everything runs in process. The notes live in memory and belong to one
// server (two servers never share notes). The files tools see one sandbox
// directory only; every path goes through an os.Root, so "..", absolute
// paths and symbolic links cannot reach anything outside it. The sandbox
// defaults to DefaultSandboxDir, which is kept between runs so that files
// written in one session can be read in the next.
//
// Time zones come from the tz database embedded in the binary
// (time/tzdata), so time tools work on machines without one.
package demo
