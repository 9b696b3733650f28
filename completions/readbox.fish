# fish completion for readbox, generated from its tool registry by tests/cli/docs.rs: do not
# edit. Install it as readbox.fish in a folder of $fish_complete_path.
#
# It completes by meaning, one position after another: file names where a tool takes a PATH,
# true or false for a boolean, all, file or directory for FILE_TYPE, the tool names after help
# and call, and nothing where free text or a number goes (a PATTERN, a glob, JSON, LINES).

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

# The tools, each with what it prints.
function __fish_readbox_tools
    printf '%s\t%s\n' \
        cat 'print a file\'s content' \
        pwd 'print the working directory' \
        ls 'list a directory\'s entries' \
        find 'list the entries of a tree whose name matches a glob' \
        grep 'print the lines that contain a literal text, as path:line:text' \
        head 'print the first lines of a file' \
        tail 'print the last lines of a file' \
        wc 'count lines, words and bytes of a file' \
        stat 'describe a file: type, size, permissions, modification time' \
        diff 'compare two files line by line, as a unified diff' \
        sh 'run a command line of the read-only tools, with pipes, && || ; and globs'
end

# Only what is offered below: no file names where a PATTERN, a glob or a number goes.
complete -c readbox -f

# The command: a tool or a meta command.
complete -c readbox -n __fish_readbox_at -a cat -d 'print a file\'s content'
complete -c readbox -n __fish_readbox_at -a pwd -d 'print the working directory'
complete -c readbox -n __fish_readbox_at -a ls -d 'list a directory\'s entries'
complete -c readbox -n __fish_readbox_at -a find -d 'list the entries of a tree whose name matches a glob'
complete -c readbox -n __fish_readbox_at -a grep -d 'print the lines that contain a literal text, as path:line:text'
complete -c readbox -n __fish_readbox_at -a head -d 'print the first lines of a file'
complete -c readbox -n __fish_readbox_at -a tail -d 'print the last lines of a file'
complete -c readbox -n __fish_readbox_at -a wc -d 'count lines, words and bytes of a file'
complete -c readbox -n __fish_readbox_at -a stat -d 'describe a file: type, size, permissions, modification time'
complete -c readbox -n __fish_readbox_at -a diff -d 'compare two files line by line, as a unified diff'
complete -c readbox -n __fish_readbox_at -a sh -d 'run a command line of the read-only tools, with pipes, && || ; and globs'
complete -c readbox -n __fish_readbox_at -a help -d 'print the usage, or the help of one tool'
complete -c readbox -n __fish_readbox_at -a version -d 'print the version'
complete -c readbox -n __fish_readbox_at -a list -d 'print the enabled tools, one per line'
complete -c readbox -n __fish_readbox_at -a policy -d 'print the effective policy as JSON, with where each setting came from'
complete -c readbox -n __fish_readbox_at -a schema -d 'print the enabled tools\' definitions (name, description, input_schema as JSON Schema) for function calling'
complete -c readbox -n __fish_readbox_at -a call -d 'run a tool with its parameters given by name; a value may start with - here'
complete -c readbox -n __fish_readbox_at -a install -d 'make a symlink named after each enabled tool in DIR, pointing at this binary; existing names are left alone'
complete -c readbox -n __fish_readbox_at -a mcp -d 'serve the enabled tools as a Model Context Protocol server: JSON-RPC on standard input and output, one message per line, each tool call run as readbox call; roots a client offers only narrow the allowed directories'
complete -c readbox -n __fish_readbox_at -s h -l help -d 'the same as readbox help'
complete -c readbox -n __fish_readbox_at -s V -l version -d 'the same as readbox version'

# cat PATH [FROM_LINE=1]
complete -c readbox -n '__fish_readbox_at cat 1' -F

# pwd

# ls [PATH=.] [SHOW_HIDDEN=false]
complete -c readbox -n '__fish_readbox_at ls 1' -F
complete -c readbox -n '__fish_readbox_at ls 2' -a 'true false' -d 'also list names that start with a dot'

# find [PATH=.] [PATTERN=*] [FILE_TYPE=all] [MAX_DEPTH=20]
complete -c readbox -n '__fish_readbox_at find 1' -F
complete -c readbox -n '__fish_readbox_at find 3' -a 'all file directory' -d 'which entries'

# grep PATTERN [PATH=.] [RECURSIVE=true] [IGNORE_CASE=false] [FILE_PATTERN=*] [MAX_DEPTH=20]
complete -c readbox -n '__fish_readbox_at grep 2' -F
complete -c readbox -n '__fish_readbox_at grep 3' -a 'true false' -d 'search subdirectories (false: the directory\'s own files only)'
complete -c readbox -n '__fish_readbox_at grep 4' -a 'true false' -d 'match regardless of case (Unicode simple case folding)'

# head PATH [LINES=10]
complete -c readbox -n '__fish_readbox_at head 1' -F

# tail PATH [LINES=10]
complete -c readbox -n '__fish_readbox_at tail 1' -F

# wc PATH
complete -c readbox -n '__fish_readbox_at wc 1' -F

# stat PATH
complete -c readbox -n '__fish_readbox_at stat 1' -F

# diff PATH_A PATH_B [CONTEXT_LINES=3]
complete -c readbox -n '__fish_readbox_at diff 1' -F
complete -c readbox -n '__fish_readbox_at diff 2' -F

# sh -c COMMAND

# help [TOOL]
complete -c readbox -n '__fish_readbox_at help 1' -a '(__fish_readbox_tools)'

# version

# list

# policy

# schema

# call TOOL JSON
complete -c readbox -n '__fish_readbox_at call 1' -a '(__fish_readbox_tools)'

# install DIR
complete -c readbox -n '__fish_readbox_at install 1' -a '(__fish_complete_directories (commandline -ct))'

# mcp
