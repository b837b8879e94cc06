#pragma once
// taskd's memory and environment kept from its tasks. A task runs as the
// user taskd runs as, and /proc/PPID/environ (or a debugger) would hand it
// what taskd withholds from its environment: the database's location with
// its password, PGPASSWORD. A process that is not "dumpable" has its /proc
// files owned by root and cannot be traced by its own user; its children
// become dumpable again as they execute their program, so nothing of theirs
// changes. It also writes no core file.
namespace taskd::exec {

// Makes this process (and the watchdog it forks) not dumpable.
void keep_memory_private();

}  // namespace taskd::exec
