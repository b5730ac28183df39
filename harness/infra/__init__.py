"""Infrastructure: the work area, child processes, the cache and history index, offload,
atomic writes, interrupts and progress."""
