# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_readbox_global_optspecs
    string join \n h/help V/version
end

function __fish_readbox_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_readbox_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_readbox_using_subcommand
    set -l cmd (__fish_readbox_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c readbox -n "__fish_readbox_needs_command" -s h -l help -d 'the same as readbox help'
complete -c readbox -n "__fish_readbox_needs_command" -s V -l version -d 'the same as readbox version'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "cat" -d 'print a file\'s content'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "pwd" -d 'print the working directory'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "ls" -d 'list a directory\'s entries'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "find" -d 'list the entries of a tree whose name matches a glob'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "grep" -d 'print the lines that contain a literal text, as path:line:text'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "head" -d 'print the first lines of a file'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "tail" -d 'print the last lines of a file'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "wc" -d 'count lines, words and bytes of a file'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "stat" -d 'describe a file: type, size, permissions, modification time'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "diff" -d 'compare two files line by line, as a unified diff'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "help" -d 'print the usage, or the help of one tool'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "version" -d 'print the version'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "list" -d 'print the enabled tools, one per line'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "policy" -d 'print the effective policy as JSON, with where each setting came from'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "schema" -d 'print the enabled tools\' definitions (name, description, input_schema as JSON Schema) for function calling'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "call" -d 'run a tool with its parameters given by name; a value may start with - here'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "install" -d 'make a symlink named after each enabled tool in DIR, pointing at this binary; existing names are left alone'
complete -c readbox -n "__fish_readbox_needs_command" -f -a "mcp" -d 'serve the enabled tools as a Model Context Protocol server: JSON-RPC on standard input and output, one message per line, each tool call run as readbox call; roots a client offers only narrow the allowed directories'
