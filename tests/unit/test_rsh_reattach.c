/* test_rsh_reattach.c - unit tests for what a reattach after a cut exec stream relies on: the
 * tagged remote command leaves its exit code in /tmp/.mpi-rsh-TAG.rc whatever the command does
 * (exit, exec, quotes, a syntax error) and also when the exec'd shell is killed, the wait script
 * (run for real with /bin/sh against a tagged local process) sees the session running, waits for
 * it and reports its code once, and the parser of the wait script's output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../rsh/rsh.h"

/* Starts /bin/sh -c line with stdout on /dev/null; its pid. */
static pid_t start_sh(const char *line)
{
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 1);
        execl("/bin/sh", "sh", "-c", line, (char *)NULL);
        _exit(127);
    }
    return p;
}

/* Runs /bin/sh -c line to its end; its exit code. */
static int run_sh(const char *line)
{
    int st;
    pid_t p = start_sh(line);
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Runs the script and returns its stdout (new string). */
static char *output_of(const char *script)
{
    FILE *f = popen(script, "r");
    assert_non_null(f);
    char *buf = calloc(1, 4096);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 4095, f);
    buf[n] = 0;
    assert_true(pclose(f) >= 0);
    return buf;
}

/* The code left in the session's file (removed), or -1 when there is none. */
static int rc_file(const char *tag)
{
    char path[128];
    snprintf(path, sizeof path, RSH_RC_DIR "/.mpi-rsh-%s.rc", tag);
    FILE *f = fopen(path, "r");
    int code = -1;
    if (!f)
        return -1;
    if (fscanf(f, "%d", &code) != 1)
        code = -2;
    fclose(f);
    unlink(path);
    return code;
}

static void test_wrapper_leaves_code(void **s)
{
    (void)s;
    struct {
        const char *cmd;
        int code;
    } cases[] = {
        { "exit 3", 3 },
        { "true", 0 },
        { "echo a # a trailing comment", 0 },
        { "exec sh -c 'exit 4'", 4 },
        { "false; echo $MPI_RSH_SESSION | grep -q .", 0 },
        { "sh -c 'kill -TERM $$'", 143 },
        { "cat <<EOF\nx\nEOF\nexit 9", 9 },
        { "test \"$(echo 'a  b')\" = 'a  b' && test \"$0\" = /bin/sh || exit 1; exit 6", 6 },
        { "echo 'unterminated", 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char tag[17];
        assert_int_equal(rsh_session_tag(tag), 0);
        char *line = rsh_remote_command(cases[i].cmd, tag);
        assert_non_null(line);
        int code = run_sh(line);
        if (code != cases[i].code)
            fail_msg("%s: exit %d, expected %d", cases[i].cmd, code, cases[i].code);
        assert_int_equal(rc_file(tag), cases[i].code);
        free(line);
    }
}

/* A session running, then over: the short look says attached, the long wait reports the code
 * once; afterwards the session is gone. */
static void test_wait_script(void **s)
{
    (void)s;
    char tag[17];
    int attached = 0, code = -1;
    assert_int_equal(rsh_session_tag(tag), 0);
    char *line = rsh_remote_command("sleep 1; exit 7", tag);
    char *probe = rsh_wait_script(tag, 0), *follow = rsh_wait_script(tag, 1);
    assert_non_null(line);
    assert_non_null(probe);
    assert_non_null(follow);
    pid_t p = start_sh(line);
    usleep(200000);
    char *out = output_of(probe);
    assert_int_equal(rsh_wait_parse(out, &attached, &code), RSH_WAITED_NOTHING);
    assert_int_equal(attached, 1);
    free(out);
    out = output_of(follow); /* returns once the session is over */
    assert_int_equal(rsh_wait_parse(out, &attached, &code), RSH_WAITED_EXIT);
    assert_int_equal(attached, 1);
    assert_int_equal(code, 7);
    free(out);
    int st;
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_int_equal(WEXITSTATUS(st), 7);
    out = output_of(follow); /* the code was taken: now gone */
    assert_int_equal(rsh_wait_parse(out, &attached, &code), RSH_WAITED_GONE);
    assert_int_equal(attached, 0);
    free(out);
    assert_int_equal(rc_file(tag), -1);
    free(line);
    free(probe);
    free(follow);
}

/* The exec'd shell killed (as containerd kills an exec'd process whose stream a kubelet restart
 * cut): the session runs on and its code (5) is still left for the wait. */
static void test_outer_shell_killed(void **s)
{
    (void)s;
    char tag[17];
    int attached = 0, code = -1, st;
    assert_int_equal(rsh_session_tag(tag), 0);
    char *line = rsh_remote_command("sleep 1; exit 5", tag), *follow = rsh_wait_script(tag, 1);
    assert_non_null(line);
    assert_non_null(follow);
    pid_t p = start_sh(line);
    usleep(300000);
    assert_int_equal(kill(p, SIGKILL), 0);
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_true(WIFSIGNALED(st));
    char *out = output_of(follow);
    assert_int_equal(rsh_wait_parse(out, &attached, &code), RSH_WAITED_EXIT);
    assert_int_equal(attached, 1);
    assert_int_equal(code, 5);
    free(out);
    free(line);
    free(follow);
}

static void test_wait_parse(void **s)
{
    (void)s;
    int attached = -1, code = -1;
    assert_int_equal(rsh_wait_parse(NULL, &attached, &code), RSH_WAITED_NOTHING);
    assert_int_equal(attached, 0);
    assert_int_equal(rsh_wait_parse("", &attached, &code), RSH_WAITED_NOTHING);
    assert_int_equal(rsh_wait_parse(RSH_WAIT_ATTACHED "\n", &attached, &code), RSH_WAITED_NOTHING);
    assert_int_equal(attached, 1);
    assert_int_equal(rsh_wait_parse(RSH_WAIT_ATTACHED "\n" RSH_WAIT_EXIT " 0\n", &attached, &code), RSH_WAITED_EXIT);
    assert_int_equal(code, 0);
    assert_int_equal(rsh_wait_parse(RSH_WAIT_EXIT " 255", &attached, &code), RSH_WAITED_EXIT);
    assert_int_equal(code, 255);
    assert_int_equal(attached, 0);
    assert_int_equal(rsh_wait_parse(RSH_WAIT_GONE "\n", &attached, &code), RSH_WAITED_GONE);
    const char *bad[] = { RSH_WAIT_EXIT " 256\n", RSH_WAIT_EXIT " \n", RSH_WAIT_EXIT " -1\n", RSH_WAIT_EXIT " 1x\n",
                          RSH_WAIT_EXIT " 123456789012345\n" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rsh_wait_parse(bad[i], &attached, &code), RSH_WAITED_GONE);
    /* other lines (a motd, a shell's warning) are ignored */
    assert_int_equal(rsh_wait_parse("hello\n" RSH_WAIT_ATTACHED "x\n", &attached, &code), RSH_WAITED_NOTHING);
    assert_int_equal(attached, 0);
}

static void test_reattach_env(void **s)
{
    (void)s;
    int secs = -1;
    char *err = NULL;
    unsetenv(RSH_REATTACH_ENV);
    assert_int_equal(rsh_reattach_env(&secs, &err), 0);
    assert_int_equal(secs, RSH_REATTACH_DEFAULT_S);
    setenv(RSH_REATTACH_ENV, "0", 1);
    assert_int_equal(rsh_reattach_env(&secs, &err), 0);
    assert_int_equal(secs, 0);
    setenv(RSH_REATTACH_ENV, "soon", 1);
    assert_int_equal(rsh_reattach_env(&secs, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, RSH_REATTACH_ENV));
    free(err);
    unsetenv(RSH_REATTACH_ENV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrapper_leaves_code), cmocka_unit_test(test_wait_script),
        cmocka_unit_test(test_outer_shell_killed),  cmocka_unit_test(test_wait_parse),
        cmocka_unit_test(test_reattach_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
