-- A page of runs reads about a page of rows along an index, but on a large history the planner
-- still expects a time range to match much of the table and starts parallel workers for it:
-- their start-up cost more than the read (measured at 1M-10M runs: ~6-8 ms where the same read
-- alone takes under 1 ms). The history is only read a page at a time, so it is read serially.
ALTER TABLE {{prefix}}runs SET (parallel_workers = 0);
