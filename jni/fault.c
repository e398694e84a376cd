/* jni/fault.c - see fault.h. Empty unless P4J_FAULT_INJECTION is defined. */
#include "fault.h"

#ifdef P4J_FAULT_INJECTION
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *armed; /* ",a,b," or NULL */

static void arm_from_env(void)
{
    const char *env = getenv("P4J_FAULTS");
    if (env && *env && !armed)
        p4j_fault_arm(env);
}

void p4j_fault_arm(const char *points)
{
    char *old = armed, *next = NULL;
    if (points && *points) {
        size_t n = strlen(points);
        next = malloc(n + 3);
        if (next) {
            next[0] = ',';
            memcpy(next + 1, points, n);
            strcpy(next + 1 + n, ",");
        }
    }
    __atomic_store_n(&armed, next, __ATOMIC_RELEASE);
    free(old); /* callers arm between tests, never while points are being checked */
}

bool p4j_fault_hit(const char *point)
{
    pthread_once(&once, arm_from_env);
    const char *list = __atomic_load_n(&armed, __ATOMIC_ACQUIRE);
    if (!list)
        return false;
    size_t n = strlen(point);
    for (const char *p = strstr(list, point); p; p = strstr(p + 1, point))
        if (p[-1] == ',' && p[n] == ',')
            return true;
    return false;
}
#else
typedef int p4j_fault_unused; /* ISO C forbids an empty translation unit */
#endif
