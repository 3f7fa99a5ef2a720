// libedit's readline interface: line editing, history and completion for the `couchette` shell.
// Its settings are C globals, which Swift 6 cannot touch safely from Swift: these functions set and read them.
#include <stdio.h>
#include <editline/readline.h>

static inline void couchette_set_readline_name(const char *name) { rl_readline_name = name; }
static inline void couchette_set_completion(rl_completion_func_t *function) {
    rl_attempted_completion_function = function;
}
static inline const char *couchette_line_buffer(void) { return rl_line_buffer; }
static inline void couchette_completion_over(void) { rl_attempted_completion_over = 1; }
static inline void couchette_flush_stdout(void) { fflush(stdout); }
