-- The free space of the data directory's file system: a number of bytes
-- (a change's plan compares it with what it may need), the same from one
-- call to the next within a few MiB.
SELECT uuidforge_data_directory_free_bytes() > 0 AS some_free;
SELECT abs(uuidforge_data_directory_free_bytes() - uuidforge_data_directory_free_bytes()) < 2^26 AS steady;
