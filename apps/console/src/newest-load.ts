/**
 * The outcome of the newest of a series of loads, and only it: a load that settles after a newer one
 * started is dropped (a filter changed twice in a row, whose first answer arrives last, must not
 * replace the second's list).
 */
export function newestLoad<T>(apply: { data: (data: T) => void; error: (error: unknown) => void }): (load: Promise<T>) => void {
  let latest = 0;
  return (load) => {
    const request = ++latest;
    load.then(
      (data) => request === latest && apply.data(data),
      (error: unknown) => request === latest && apply.error(error),
    );
  };
}
