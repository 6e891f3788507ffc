# bash completion for tally(1). Commands come from `tally --help` and each
# command's options from `tally help CMD`, so the completion follows the
# binary it completes and never goes stale. Installed by `cmake --install`.

# The commands listed by `tally --help`.
_tally_commands()
{
    "$1" --help 2>/dev/null | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 } f && /^$/ { exit }'
}

# "OPTION ARG" for every option of a command (ARG "-" for a flag).
_tally_options()
{
    "$1" help "$2" 2>/dev/null | awk '
        /^  +-/ {
            line = $0; sub(/^ +/, "", line)
            n = split(line, w, /[ ,]+/)
            arg = "-"
            for (i = 1; i <= n; i++) {
                if (w[i] ~ /^--?[A-Za-z]/) { opts[++k] = w[i]; continue }
                if (w[i] ~ /^[A-Z]+$/) arg = w[i]
                break
            }
            for (j = 1; j <= k; j++) print opts[j], arg
            k = 0
        }'
}

_tally()
{
    local cur prev cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cword=$COMP_CWORD
    local tally=${COMP_WORDS[0]}
    if ((cword == 1)); then
        COMPREPLY=($(compgen -W "$(_tally_commands "$tally") help --help --version" -- "$cur"))
        return
    fi
    local cmd=${COMP_WORDS[1]}
    if [[ $cmd == help ]]; then
        ((cword == 2)) && COMPREPLY=($(compgen -W "$(_tally_commands "$tally")" -- "$cur"))
        return
    fi
    local table arg
    table=$(_tally_options "$tally" "$cmd")
    arg=$(awk -v p="$prev" '$1 == p { print $2; exit }' <<<"$table")
    case $arg in
    FILE) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
    M) COMPREPLY=($(compgen -W "median mean total" -- "$cur")); return ;;
    C) COMPREPLY=($(compgen -W "holm none" -- "$cur")); return ;;
    WHEN) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
    "" | -) ;;
    *) return ;; # a number or a title: nothing to offer
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(awk '{ print $1 }' <<<"$table")" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
    compopt -o filenames 2>/dev/null
}
complete -F _tally tally
