/* jni/fault.h - named fault-injection points, compiled only into test builds.
 *
 * A point is a string ("jvm.global_new"); P4J_FAULT(point) is true when that point is
 * armed, through $P4J_FAULTS ("a,b") at first use or p4j_fault_arm(). Ordinary builds
 * define P4J_FAULT as 0, so the points cost nothing. Each point makes the code beside
 * it take its failure path, so tests can run error paths a real JVM rarely takes.
 */
#ifndef P4J_FAULT_H
#define P4J_FAULT_H

#include <stdbool.h>

#ifdef P4J_FAULT_INJECTION
/* Returns true when `point` is armed. Thread-safe. */
bool p4j_fault_hit(const char *point);
/* Arms the comma-separated `points` (NULL or "" disarms all). Not for concurrent use. */
void p4j_fault_arm(const char *points);
#define P4J_FAULT(point) p4j_fault_hit(point)
#else
#define P4J_FAULT(point) 0
#endif

#endif /* P4J_FAULT_H */
