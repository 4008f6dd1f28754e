export default function Home() {
  return <main className="p-8"><h1 className="text-2xl font-semibold">Beton · বেতন</h1></main>;
}
