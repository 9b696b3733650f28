# zsh completion for readbox's tools under their own names (cat, grep, ...): the links that
# readbox install DIR makes. Generated from readbox's tool registry by tests/cli/docs.rs: do not
# edit.
#
# Opt-in: a shell that sources this file after compinit completes cat, grep, ls ... as
# readbox's tools, in place of the system's own. It hands each line to _readbox (the file
# _readbox, which must be on $fpath) as if it had been typed as readbox TOOL ....

_readbox_link() {
    words=(readbox "${words[1]:t}" "${(@)words[2,-1]}")
    (( CURRENT += 1 ))
    _readbox "$@"
}

compdef _readbox_link cat pwd ls find grep head tail wc stat diff
