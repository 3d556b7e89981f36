package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"path/filepath"

	"github.com/toolfold/toolfold/internal/autogroup"
	"github.com/toolfold/toolfold/internal/catalog"
	"github.com/toolfold/toolfold/internal/config"
)

// rememberDerived gives the derivation settings a memo of derived groups
// (autogroup.Memo), kept in the cache directory under a name taken from
// the config's path, so that a restart on an unchanged catalog derives
// nothing and a rebuild derives only the groups whose tools changed.
// Without a cache directory the memo lives in memory only.
func rememberDerived(s *autogroup.Settings, cfg *config.Config, cacheDir string, log *slog.Logger) {
	if s == nil {
		return
	}
	path, build := "", ""
	if cacheDir != "" {
		build = buildIdentity()
	}
	if build != "" {
		abs, err := filepath.Abs(cfg.File)
		if err != nil {
			abs = cfg.File
		}
		sum := sha256.Sum256([]byte(abs))
		path = filepath.Join(cacheDir, "autogroups", "derived-"+hex.EncodeToString(sum[:8])+".json")
	}
	m, err := autogroup.OpenMemo(path, build)
	if err != nil && log != nil {
		log.Info("derived groups are derived again this start", "error", err)
	}
	s.Memo = m
}

// flushDerived writes the memo of derived groups once spec's catalog is
// whole (no server pending): a pending build knows too few groups to say
// which derivations to keep.
func (p *Plan) flushDerived(spec catalog.Spec) {
	if p.AutoGroups == nil || p.AutoGroups.Memo == nil || len(spec.PendingSources) > 0 {
		return
	}
	if err := p.AutoGroups.Memo.Flush(); err != nil {
		p.logf("%v; the next start derives the groups again", err)
	}
}
