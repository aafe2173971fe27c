// The counts live beside the slot row that keeps them (store/tick/slot.ts); the tick reads them from here.
export { addCounts, countsOf, ZERO_COUNTS } from "../store/tick/slot.js";
