export async function runDemo(_args: string[]) { throw new Error("demo not written yet"); }
