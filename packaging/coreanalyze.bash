# bash completion for coreanalyze (installed as share/bash-completion/completions/coreanalyze).
# The options are read from the program's own --help (the subcommand's, after `triage` or
# `collect`) each time, so this file names none of them and cannot fall behind; an option's
# argument is completed by its name in that help (PATH, FILE, DIR, PID...).

# "OPTION ARGUMENT" per option of `coreanalyze [SUBCOMMAND] --help` (ARGUMENT empty for flags),
# from boost's layout: "  -j [ --jobs ] N   text" and "  --exe PATH   text".
_coreanalyze_options() {
  "$@" --help 2>/dev/null |
    sed -n -E 's/^  (-[[:alnum:]] \[ )?(--[[:alnum:]][[:alnum:]-]*)( \])?( ([A-Z][A-Z.]*))?( |$).*/\2 \5/p'
}

_coreanalyze() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local -a program=("${COMP_WORDS[0]}")
  local word subcommand=
  for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case $word in
      triage | collect) subcommand=$word; program+=("$word"); break ;;
    esac
  done
  COMPREPLY=()

  local option argument
  if [[ $prev == -* ]]; then
    while read -r option argument; do
      [[ $option == "$prev" && -n $argument ]] || continue
      case $argument in
        DIR | LOCAL) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        PATH | FILE | DIRS) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        PID) mapfile -t COMPREPLY < <(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "$cur") ;;
        *) ;;  # a number, a version, a pattern: nothing to offer
      esac
      return 0
    done < <(_coreanalyze_options "${program[@]}")
  fi

  if [[ $cur == -* ]]; then
    local -a options=()
    while read -r option argument; do options+=("$option"); done \
      < <(_coreanalyze_options "${program[@]}")
    mapfile -t COMPREPLY < <(compgen -W "${options[*]}" -- "$cur")
    return 0
  fi
  # A core, a triage input, or (first) a subcommand.
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  if [[ -z $subcommand && $COMP_CWORD -eq 1 ]]; then
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "triage collect" -- "$cur")
  fi
  return 0
}
complete -o filenames -F _coreanalyze coreanalyze
