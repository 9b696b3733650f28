# fish completion for readbox's tools under their own names (cat, grep, ...): the links that
# readbox install DIR makes. Generated from readbox's tool registry by tests/cli/docs.rs: do not
# edit.
#
# Opt-in: a shell that sources this file (from config.fish) completes the arguments of cat, grep,
# ls ... as readbox's tools take them, in place of the system's own; fish's option completions
# for those names still appear after a -, and readbox refuses those options with the call that
# does the same. It stands alone: readbox.fish is not needed.

# Succeeds when the word under the cursor is argument $argv[2] (from 1) of $argv[1], a tool or
# meta command reached as `readbox NAME ...` or through a link named NAME; with no arguments,
# when it is the command word after readbox. The first -- ends readbox's flag check and is not
# an argument.
function __fish_readbox_at
    set -l words (commandline -opc)
    set -l name (string replace -r -- '.*/' '' $words[1])
    set -e words[1]
    if not contains -- $name cat pwd ls find grep head tail wc stat diff
        if not set -q words[1]
            not set -q argv[1]
            return
        end
        set name $words[1]
        set -e words[1]
    end
    set -q argv[1]
    and test "$name" = "$argv[1]"
    or return 1
    if set -l i (contains -i -- -- $words)
        set -e words[$i]
    end
    test (count $words) -eq (math $argv[2] - 1)
end

# For each name, -f keeps file names out where a PATTERN or a number goes, and -F
# lets them in where a PATH goes.

# cat PATH [FROM_LINE=1]
complete -c cat -f
complete -c cat -n '__fish_readbox_at cat 1' -F

# pwd
complete -c pwd -f

# ls [PATH=.] [SHOW_HIDDEN=false]
complete -c ls -f
complete -c ls -n '__fish_readbox_at ls 1' -F
complete -c ls -n '__fish_readbox_at ls 2' -a 'true false' -d 'also list names that start with a dot'

# find [PATH=.] [PATTERN=*] [FILE_TYPE=all] [MAX_DEPTH=20]
complete -c find -f
complete -c find -n '__fish_readbox_at find 1' -F
complete -c find -n '__fish_readbox_at find 3' -a 'all file directory' -d 'which entries'

# grep PATTERN [PATH=.] [RECURSIVE=true] [IGNORE_CASE=false] [FILE_PATTERN=*] [MAX_DEPTH=20]
complete -c grep -f
complete -c grep -n '__fish_readbox_at grep 2' -F
complete -c grep -n '__fish_readbox_at grep 3' -a 'true false' -d 'search subdirectories (false: the directory\'s own files only)'
complete -c grep -n '__fish_readbox_at grep 4' -a 'true false' -d 'match regardless of case (Unicode simple case folding)'

# head PATH [LINES=10]
complete -c head -f
complete -c head -n '__fish_readbox_at head 1' -F

# tail PATH [LINES=10]
complete -c tail -f
complete -c tail -n '__fish_readbox_at tail 1' -F

# wc PATH
complete -c wc -f
complete -c wc -n '__fish_readbox_at wc 1' -F

# stat PATH
complete -c stat -f
complete -c stat -n '__fish_readbox_at stat 1' -F

# diff PATH_A PATH_B [CONTEXT_LINES=3]
complete -c diff -f
complete -c diff -n '__fish_readbox_at diff 1' -F
complete -c diff -n '__fish_readbox_at diff 2' -F
