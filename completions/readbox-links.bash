# bash completion for readbox's tools under their own names (cat, grep, ...): the links that
# readbox install DIR makes. Generated from readbox's tool registry by tests/cli/docs.rs: do not
# edit.
#
# Opt-in: a shell that sources this file completes cat, grep, ls ... as readbox's tools, in place
# of the system's own cat, grep, ls. Source it where those names are readbox (after
# bash-completion, whose registrations it replaces). It stands alone: readbox.bash is not needed.

# Sets `words` to the words before the one under the cursor, as readbox will receive them, `cur`
# to that word up to the cursor, and `pre` to the start of `cur` that bash keeps when it inserts
# a completion. bash splits COMP_WORDS at the characters of COMP_WORDBREAKS too (key=value, a:b);
# the pieces that touch in the line are joined back, so that a PATTERN key=value counts as one
# argument.
_readbox_split() {
    local line=${COMP_LINE:0:COMP_POINT} piece i n=-1
    words=()
    for ((i = 0; i <= COMP_CWORD; i++)); do
        piece=${COMP_WORDS[i]}
        if ((n < 0)) || [[ $line == [[:space:]]* ]]; then
            line=${line#"${line%%[![:space:]]*}"}
            n=$((n + 1))
            words[n]=
        fi
        if ((i == COMP_CWORD)); then
            piece=$line
            pre=${words[n]}
            # After a lone = or :, bash completes an empty word.
            if [[ -n $piece && -z ${piece//[=:]/} ]]; then
                pre+=$piece
            fi
        fi
        words[n]+=$piece
        line=${line:${#piece}}
    done
    cur=${words[n]}
    unset "words[n]"
}

# Offers the words of $1 that start with `cur`.
_readbox_words() {
    local IFS=$' \t\n'
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
}

# Offers the names `compgen $1` finds for `cur` (-f files and directories, -d directories), less
# the start that bash keeps. When it finds none, readline's own completion of names ($2: default
# or dirnames) takes over, which also understands quotes and backslashes.
_readbox_names() {
    local name
    COMPREPLY=()
    compopt -o filenames -o "$2" 2>/dev/null
    while IFS= read -r name; do
        COMPREPLY+=("${name#"$pre"}")
    done < <(compgen "$1" -- "$cur")
}

# Offers what argument $2 (from 0) of the tool or meta command $1 takes.
_readbox_offer() {
    local -a kinds=()
    case $1 in
        cat) kinds=(path int) ;; # cat PATH [FROM_LINE=1]
        pwd) kinds=() ;; # pwd
        ls) kinds=(path bool) ;; # ls [PATH=.] [SHOW_HIDDEN=false]
        find) kinds=(path text file_type int) ;; # find [PATH=.] [PATTERN=*] [FILE_TYPE=all] [MAX_DEPTH=20]
        grep) kinds=(text path bool bool text int) ;; # grep PATTERN [PATH=.] [RECURSIVE=true] [IGNORE_CASE=false] [FILE_PATTERN=*] [MAX_DEPTH=20]
        head) kinds=(path int) ;; # head PATH [LINES=10]
        tail) kinds=(path int) ;; # tail PATH [LINES=10]
        wc) kinds=(path) ;; # wc PATH
        stat) kinds=(path) ;; # stat PATH
        diff) kinds=(path path int) ;; # diff PATH_A PATH_B [CONTEXT_LINES=3]
        sh) kinds=(text) ;; # sh -c COMMAND
        help) kinds=(tool) ;; # help [TOOL]
        version) kinds=() ;; # version
        list) kinds=() ;; # list
        policy) kinds=() ;; # policy
        schema) kinds=() ;; # schema
        call) kinds=(tool text) ;; # call TOOL JSON
        install) kinds=(dir) ;; # install DIR
        mcp) kinds=() ;; # mcp
    esac
    case ${kinds[$2]} in
        path) _readbox_names -f default ;;
        bool) _readbox_words 'true false' ;;
        file_type) _readbox_words 'all file directory' ;;
        tool) _readbox_words 'cat pwd ls find grep head tail wc stat diff sh' ;;
        dir) _readbox_names -d dirnames ;;
        *) COMPREPLY=() ;; # int, text, or past the last argument
    esac
}

# Completes the argument under the cursor of the tool or meta command $1, whose arguments start
# at words[$2]. The first -- ends readbox's flag check and is not an argument.
_readbox_args() {
    local i n=0 ended=
    for ((i = $2; i < ${#words[@]}; i++)); do
        if [[ -z $ended && ${words[i]} == -- ]]; then
            ended=1
        else
            n=$((n + 1))
        fi
    done
    _readbox_offer "$1" "$n"
}

# readbox TOOL ARG..., readbox help TOOL, ...
_readbox() {
    local cur pre
    local -a words
    _readbox_split
    if ((${#words[@]} <= 1)); then
        if [[ $cur == -* ]]; then
            _readbox_words '-h --help -V --version'
        else
            _readbox_words 'cat pwd ls find grep head tail wc stat diff sh help version list policy schema call install mcp'
        fi
    else
        _readbox_args "${words[1]}" 2
    fi
}

# TOOL ARG... through a link named after the tool ($1: the command as typed, /opt/bin/cat).
_readbox_link() {
    local cur pre
    local -a words
    _readbox_split
    _readbox_args "${1##*/}" 1
}

complete -F _readbox_link cat pwd ls find grep head tail wc stat diff
