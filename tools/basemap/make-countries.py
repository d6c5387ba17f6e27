#!/usr/bin/env python3
"""Makes web/basemap/countries.geojson and cities.geojson, the web app's offline basemap, from Natural Earth's 1:110m
countries and its capitals.

Natural Earth is in the public domain. Its 1:110m countries ship inside the PyPI wheel geopandas==0.14.4
(datasets/naturalearth_lowres); geopandas itself is not needed, only the shapefile, read with pyshp. Coordinates are
rounded to 2 decimals (about a kilometre), which keeps the file near 185 KB and is finer than the map ever draws a
country outline at the zooms the basemap is for. Run it again only to change what the file holds:

    pip download --no-deps geopandas==0.14.4 -d /tmp/ne && pip install pyshp
    python3 tools/basemap/make-countries.py /tmp/ne/geopandas-0.14.4-py3-none-any.whl
"""
import json
import os
import sys
import tempfile
import zipfile

import shapefile  # pyshp

DATASET = "geopandas/datasets/naturalearth_lowres/naturalearth_lowres"
CITIES = "geopandas/datasets/naturalearth_cities/naturalearth_cities"
# The files are written where the hub serves them from: web/basemap/ of the repository.
# The capitals' .dbf was written as ISO-8859-1 (its .cpg says so), and the names with letters that encoding lacks
# were written with '?' in their place: the file cannot give them back. Natural Earth's own names for them, by the
# damaged spelling; a damaged name not listed here stops the script rather than ship a '?'.
LOST_LETTERS = {"?saka": "Ōsaka", "Chi?in?u": "Chișinău"}
HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "web", "basemap")


def rounded(coordinates):
    """The same nesting of lists with every number rounded to 2 decimals, and repeated points dropped."""
    if coordinates and isinstance(coordinates[0], (int, float)):
        return [round(coordinates[0], 2), round(coordinates[1], 2)]
    out = [rounded(c) for c in coordinates]
    if out and isinstance(out[0], list) and out[0] and isinstance(out[0][0], float):
        deduped = [out[0]] + [p for i, p in enumerate(out[1:], 1) if p != out[i - 1]]
        return deduped
    return out


def main(wheel):
    with tempfile.TemporaryDirectory() as scratch:
        with zipfile.ZipFile(wheel) as archive:
            for extension in ("shp", "shx", "dbf", "prj"):
                archive.extract(f"{DATASET}.{extension}", scratch)
        # The .dbf is Latin-1 (Côte d'Ivoire), though it carries no .cpg saying so.
        reader = shapefile.Reader(os.path.join(scratch, DATASET), encoding="latin-1")
        names = [field[0] for field in reader.fields[1:]]
        features = []
        for record in reader.shapeRecords():
            attributes = dict(zip(names, record.record))
            geometry = record.shape.__geo_interface__
            features.append({
                "type": "Feature",
                "properties": {"name": attributes.get("name"), "iso_a3": attributes.get("iso_a3")},
                "geometry": {"type": geometry["type"], "coordinates": rounded(geometry["coordinates"])},
            })
    features.sort(key=lambda f: f["properties"]["name"] or "")
    collection = {
        "type": "FeatureCollection",
        "source": "Natural Earth 1:110m Admin 0 - Countries (public domain), from geopandas 0.14.4",
        "features": features,
    }
    write("countries.geojson", collection)
    with tempfile.TemporaryDirectory() as scratch:
        with zipfile.ZipFile(wheel) as archive:
            for extension in ("shp", "shx", "dbf", "prj", "cpg"):
                archive.extract(f"{CITIES}.{extension}", scratch)
        with open(os.path.join(scratch, f"{CITIES}.cpg")) as cpg:
            encoding = cpg.read().strip()  # ISO-8859-1
        reader = shapefile.Reader(os.path.join(scratch, CITIES), encoding=encoding)
        names = [field[0] for field in reader.fields[1:]]
        cities = []
        for record in reader.shapeRecords():
            point = record.shape.points[0]
            name = dict(zip(names, record.record)).get("name")
            if "?" in name:
                if name not in LOST_LETTERS:
                    sys.exit(f"make-countries.py: {name!r}: letters lost in the source's {encoding}; add its "
                             "real spelling to LOST_LETTERS")
                name = LOST_LETTERS[name]
            cities.append({
                "type": "Feature",
                "properties": {"name": name},
                "geometry": {"type": "Point", "coordinates": [round(point[0], 2), round(point[1], 2)]},
            })
    cities.sort(key=lambda f: f["properties"]["name"] or "")
    write("cities.geojson", {
        "type": "FeatureCollection",
        "source": "Natural Earth populated places: capitals (public domain), from geopandas 0.14.4",
        "features": cities,
    })


def write(name, collection):
    target = os.path.join(HERE, name)
    with open(target, "w", encoding="utf-8") as out:
        json.dump(collection, out, separators=(",", ":"), ensure_ascii=False)
        out.write("\n")
    print(f"{target}: {len(collection['features'])} features, {os.path.getsize(target)} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make-countries.py GEOPANDAS_0.14.4_WHEEL")
    main(sys.argv[1])
